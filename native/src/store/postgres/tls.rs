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
            let pem = read_root_cert_file(path).map_err(unreadable)?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
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

/// The most an `sslrootcert` file may hold: a CA bundle is a few hundred KB (Mozilla's whole
/// set is about 220 KB), so this is generous, and a path to `/dev/zero` or a huge file ends in
/// an error instead of reading gigabytes.
const MAX_ROOT_CERT_BYTES: u64 = 4 << 20;

/// The bytes of the `sslrootcert` file at `path`, read only if it is a regular file and at most
/// [`MAX_ROOT_CERT_BYTES`] long. The file is opened without blocking, so a FIFO (or a device)
/// given by mistake is refused at once instead of waiting for a writer forever.
fn read_root_cert_file(path: &std::path::Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let fd = rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| std::io::Error::from(e).to_string())?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > MAX_ROOT_CERT_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_ROOT_CERT_BYTES} a certificate file may hold",
            meta.len()
        ));
    }
    let mut pem = Vec::new();
    file.take(MAX_ROOT_CERT_BYTES + 1)
        .read_to_end(&mut pem)
        .map_err(|e| e.to_string())?;
    if pem.len() as u64 > MAX_ROOT_CERT_BYTES {
        return Err(format!(
            "more than the {MAX_ROOT_CERT_BYTES} bytes a certificate file may hold"
        ));
    }
    Ok(pem)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_cert_that_is_not_a_small_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert_eq!(
            read_root_cert_file(&fifo).unwrap_err(),
            "not a regular file"
        );
        let zero = std::path::Path::new("/dev/zero");
        assert_eq!(read_root_cert_file(zero).unwrap_err(), "not a regular file");
        assert_eq!(
            read_root_cert_file(dir.path()).unwrap_err(),
            "not a regular file"
        );
        let huge = dir.path().join("huge.pem");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(MAX_ROOT_CERT_BYTES + 1)
            .unwrap();
        assert!(read_root_cert_file(&huge)
            .unwrap_err()
            .contains("more than the 4194304"));
        let small = dir.path().join("ca.pem");
        std::fs::write(&small, "not a certificate").unwrap();
        assert_eq!(read_root_cert_file(&small).unwrap(), b"not a certificate");
        assert!(read_root_cert_file(&dir.path().join("missing"))
            .unwrap_err()
            .contains("No such file"));
    }

    #[test]
    fn a_url_naming_dev_zero_as_its_root_cert_fails_naming_it() {
        let settings = crate::store::postgres::url::parse(
            "postgres://u:p@127.0.0.1:1/db?sslmode=verify-ca&sslrootcert=/dev/zero",
        )
        .unwrap();
        let error = connector(&settings).err().unwrap().to_string();
        assert!(
            error.contains("sslrootcert /dev/zero: not a regular file"),
            "{error}"
        );
    }
}
