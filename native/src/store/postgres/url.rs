//! What ctxkit reads from a PostgreSQL URL itself, before the client parses the rest: libpq's
//! `sslmode` and `sslrootcert` (the client knows only three of the five modes and no root
//! certificate file) and ctxkit's own `ctxkit_sync`. And which strings are database URLs at
//! all: [`is_postgres_url`] for the ones ctxkit speaks, [`looks_like_database_url`] for the
//! ones it must refuse rather than take as a file path (`POSTGRES://`, `mysql://`,
//! `postgres:` without `//`).

use std::path::PathBuf;

use ctxkit_core::text::is_invisible;

use crate::error::{Error, Result};

/// libpq's `sslmode`, with libpq's meanings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain TCP only.
    Disable,
    /// TLS when the server offers it, else plain (libpq's default, and this store's).
    Prefer,
    /// TLS or nothing; the certificate is not checked.
    Require,
    /// TLS, the certificate signed by a trusted CA (`sslrootcert`); any host name.
    VerifyCa,
    /// TLS, the certificate signed by a trusted CA and naming the host connected to.
    VerifyFull,
}

/// When a commit is acknowledged (`ctxkit_sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// `ctxkit_sync=commit` (the default): every commit waits for the server's WAL flush
    /// (the server's `synchronous_commit`, `on` unless its administrator changed it).
    Commit,
    /// `ctxkit_sync=turn`: writes commit without waiting for the flush and the engine's
    /// once-per-turn [`crate::store::SessionStore::sync`] waits; a server crash can lose the
    /// commits of its last moments (whole transactions), acknowledged or not.
    Turn,
}

/// A URL split into what ctxkit reads and what it hands to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlSettings {
    /// The URL without the parameters below (the client refuses them).
    pub client_url: String,
    /// `sslmode` (default [`SslMode::Prefer`]).
    pub ssl_mode: SslMode,
    /// `sslrootcert`: a PEM file of trusted CA certificates; `None` or `system`: the Mozilla
    /// roots built in (webpki-roots).
    pub root_cert: Option<PathBuf>,
    /// `ctxkit_sync`, when given.
    pub sync: Option<SyncMode>,
}

/// Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`).
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// Whether `text` has the shape of a database URL (a scheme, then `://`; or `postgres:` /
/// `postgresql:` in any case) without being one ctxkit speaks: a caller must refuse it, not
/// take it for a file path (a folder named `mysql:` holding a file named after the password).
pub fn looks_like_database_url(text: &str) -> bool {
    // A URL after whitespace or control characters (a pasted ` postgres://…`, a tab or newline
    // from a script) is a URL given wrongly, not a file path: taken as a path, it made folders
    // named after the URL, password included. Nothing is trimmed silently: it is refused.
    // An invisible character (a byte order mark, a zero-width space) before it is the same.
    let trimmed =
        text.trim_start_matches(|c: char| c.is_whitespace() || c.is_control() || is_invisible(c));
    if trimmed.len() != text.len() {
        return is_postgres_url(trimmed) || looks_like_database_url(trimmed);
    }
    if is_postgres_url(text) {
        return false;
    }
    // So is a URL with an invisible character inside its scheme (`postgres\u{200B}://`): read
    // without them, it is the URL its writer meant.
    if text.chars().any(is_invisible) {
        let visible: String = text.chars().filter(|&c| !is_invisible(c)).collect();
        return is_postgres_url(&visible) || looks_like_database_url(&visible);
    }
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("postgres:") || lower.starts_with("postgresql:") {
        return true;
    }
    match text.find("://") {
        Some(end) => {
            let scheme = text.get(..end).unwrap_or("");
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Splits `url` (a [`is_postgres_url`] one) into [`UrlSettings`]; a bad value of a parameter
/// ctxkit reads is an error naming it (the URL itself is never repeated: it may hold a password).
pub fn parse(url: &str) -> Result<UrlSettings> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut settings = UrlSettings {
        client_url: base.to_owned(),
        ssl_mode: SslMode::Prefer,
        root_cert: None,
        sync: None,
    };
    let mut kept = Vec::new();
    for pair in query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = percent_decode(value)?;
        match key {
            "sslmode" => {
                settings.ssl_mode = match decoded.as_str() {
                    "disable" => SslMode::Disable,
                    "allow" | "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(Error::invalid(
                            "database",
                            format!(
                                "sslmode={other:?}: one of disable, prefer, require, verify-ca, \
                                 verify-full"
                            ),
                        ))
                    }
                }
            }
            "sslrootcert" => {
                settings.root_cert = Some(decoded).filter(|p| p != "system").map(PathBuf::from);
            }
            "ctxkit_sync" => {
                settings.sync = Some(match decoded.as_str() {
                    "commit" => SyncMode::Commit,
                    "turn" => SyncMode::Turn,
                    other => {
                        return Err(Error::invalid(
                            "database",
                            format!("ctxkit_sync={other:?}: commit (the default) or turn"),
                        ))
                    }
                })
            }
            _ => kept.push(pair),
        }
    }
    let names_host_by_parameter = kept
        .iter()
        .any(|pair| pair.starts_with("host=") || pair.starts_with("hostaddr="));
    if url_host(base).is_empty() && !names_host_by_parameter {
        return Err(Error::invalid(
            "database",
            "the URL names no host: postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE",
        ));
    }
    if !kept.is_empty() {
        settings.client_url.push('?');
        settings.client_url.push_str(&kept.join("&"));
    }
    Ok(settings)
}

/// `%XX` escapes of a URL parameter's value decoded (and `+` left as it is, as libpq does).
/// The host part of `base` (a URL without its query): what follows the `scheme://`, the
/// user's part (up to the last `@`) and comes before the port and the path. Empty when the URL
/// names none (`postgres://`, `postgres:///db`, `postgres://user@:5432/db`).
fn url_host(base: &str) -> &str {
    let rest = base.split_once("://").map_or("", |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host_port.starts_with('[') {
        // An IPv6 literal, `[::1]:5432`: the host is what the brackets hold.
        return host_port
            .split(']')
            .next()
            .unwrap_or("")
            .trim_start_matches('[');
    }
    host_port.split(':').next().unwrap_or("")
}

fn percent_decode(value: &str) -> Result<String> {
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.bytes();
    while let Some(byte) = bytes.next() {
        if byte != b'%' {
            out.push(byte);
            continue;
        }
        let high = bytes.next().and_then(|b| (b as char).to_digit(16));
        let low = bytes.next().and_then(|b| (b as char).to_digit(16));
        let (Some(high), Some(low)) = (high, low) else {
            return Err(Error::invalid(
                "database",
                "a URL parameter has a % not followed by two hex digits",
            ));
        };
        out.push(u8::try_from(high * 16 + low).unwrap_or(b'?'));
    }
    String::from_utf8(out)
        .map_err(|_| Error::invalid("database", "a URL parameter is not UTF-8 once decoded"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctxkit_parameters_are_taken_out_and_the_rest_kept() {
        let s = parse(
            "postgres://u:pw@h/db?sslmode=verify-full&connect_timeout=3&sslrootcert=%2Ftmp%2Fca.pem&ctxkit_sync=turn",
        )
        .unwrap();
        assert_eq!(s.client_url, "postgres://u:pw@h/db?connect_timeout=3");
        assert_eq!(s.ssl_mode, SslMode::VerifyFull);
        assert_eq!(s.root_cert, Some(PathBuf::from("/tmp/ca.pem")));
        assert_eq!(s.sync, Some(SyncMode::Turn));
        let plain = parse("postgresql://h/db").unwrap();
        assert_eq!(plain.client_url, "postgresql://h/db");
        assert_eq!((plain.ssl_mode, plain.sync), (SslMode::Prefer, None));
    }

    #[test]
    fn a_bad_value_is_named_and_the_password_is_not() {
        let error = parse("postgres://u:secret@h/db?sslmode=verify").unwrap_err();
        let text = error.to_string();
        assert!(text.contains("sslmode=\"verify\""), "{text}");
        assert!(!text.contains("secret"), "{text}");
        assert!(parse("postgres://h/db?ctxkit_sync=never").is_err());
    }

    #[test]
    fn database_urls_ctxkit_does_not_speak_are_recognised() {
        for url in [
            "POSTGRES://user:pw@host/db",
            "Postgresql://host/db",
            "mysql://user:pw@host/db",
            "postgres:user@host/db",
            "postgresql:/db",
            "sqlite://x.db",
            " postgres://user:pw@host/db",
            "\tpostgresql://host/db",
            "\n postgres://host/db",
            "\u{3000}mysql://host/db",
        ] {
            assert!(looks_like_database_url(url), "{url}");
        }
        for path in [
            "postgres://host/db",
            "./ctxkit.db",
            "/tmp/a://b",
            "data/postgres.db",
            " my notes.db",
            "",
        ] {
            assert!(!looks_like_database_url(path), "{path}");
        }
    }

    #[test]
    fn a_url_without_a_host_is_refused_naming_the_shape() {
        for url in [
            "postgres://",
            "postgresql:///db",
            "postgres://user:secret@/db",
            "postgres://user:secret@:5432/db",
            "postgres://[]/db",
        ] {
            let text = parse(url).unwrap_err().to_string();
            assert!(text.contains("names no host"), "{url}: {text}");
            assert!(!text.contains("secret"), "{url}: {text}");
        }
        for url in [
            "postgres://h/db",
            "postgres://user:secret@h:5432/db",
            "postgres://[::1]:5432/db",
            "postgres:///db?host=/var/run/postgresql",
        ] {
            assert!(parse(url).is_ok(), "{url}");
        }
    }
}
