//! TLS to the PostgreSQL server over rustls (no OpenSSL to build or link), with libpq's
//! `sslmode` meanings ([`SslMode`]): `prefer` and `require` encrypt without checking the
//! certificate (as libpq does), `verify-ca` checks that a trusted CA signed it, `verify-full`
//! also that it names the host connected to. The trusted CAs are the `sslrootcert` PEM file's,
//! or the Mozilla roots built in (webpki-roots) when none is given.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};
use crate::store::postgres::url::{SslMode, UrlSettings};

/// The connector for `settings`, `None` for `sslmode=disable`.
pub(super) fn connector(settings: &UrlSettings) -> Result<Option<MakeRustlsConnect>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (chain, check_host) = match settings.ssl_mode {
        SslMode::Disable => return Ok(None),
        SslMode::Prefer | SslMode::Require => (None, false),
        SslMode::VerifyCa => (Some(webpki(settings, &provider)?), false),
        SslMode::VerifyFull => (Some(webpki(settings, &provider)?), true),
    };
    let verifier = Arc::new(Verifier {
        chain,
        check_host,
        provider: provider.clone(),
    });
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::invalid("database", format!("TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Some(MakeRustlsConnect::new(config)))
}

/// The standard verifier (chain and host name) over the trusted CAs.
fn webpki(
    settings: &UrlSettings,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>> {
    let mut roots = RootCertStore::empty();
    match &settings.root_cert {
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(path) => {
            let unreadable = |e: String| {
                let shown = path.display();
                Error::invalid("database", format!("sslrootcert {shown}: {e}"))
            };
            let certs =
                CertificateDer::pem_file_iter(path).map_err(|e| unreadable(e.to_string()))?;
            for cert in certs {
                let cert = cert.map_err(|e| unreadable(e.to_string()))?;
                roots.add(cert).map_err(|e| unreadable(e.to_string()))?;
            }
            if roots.is_empty() {
                return Err(unreadable("no PEM certificate in it".to_owned()));
            }
        }
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| Error::invalid("database", format!("TLS: {e}")))
}

/// The server's certificate checked as `sslmode` says. The handshake's signatures are always
/// checked (with the provider's algorithms, as rustls's own verifier does), so the session key
/// belongs to the certificate shown, whatever is checked of the certificate itself.
#[derive(Debug)]
struct Verifier {
    /// The chain's verifier (`verify-ca`, `verify-full`); `None`: the certificate is not
    /// checked (`prefer`, `require`, libpq's meaning).
    chain: Option<Arc<WebPkiServerVerifier>>,
    /// Whether the certificate must name the host connected to (`verify-full`).
    check_host: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_host => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
