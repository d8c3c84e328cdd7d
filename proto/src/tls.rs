//! TLS for the gRPC channel (rustls with the ring provider): the coordinator's certificate and
//! key, and the root a worker trusts. Files are checked when loaded, so a bad file fails at
//! start with a one-line error naming it rather than at the first handshake. TLS protects the
//! traffic; the token (see [`crate::auth`]) still decides who may connect.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig};

/// A certificate, key or address TLS cannot use, with the file or address it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(pub String);

macro_rules! tls_error {
    ($($arg:tt)*) => {
        TlsError(format!($($arg)*))
    };
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| tls_error!("cannot read {what} {}: {e}", path.display()))
}

/// The PEM certificates in `pem` (at least one).
fn certificates(pem: &[u8], path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error!("{}: invalid PEM: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(tls_error!("{}: no PEM certificate (BEGIN CERTIFICATE) found", path.display()));
    }
    Ok(certs)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Server side: the certificate chain in `cert` and its private key in `key` (both PEM).
pub fn server_config(cert: &Path, key: &Path) -> Result<ServerTlsConfig, TlsError> {
    let cert_pem = read(cert, "certificate")?;
    let key_pem = read(key, "private key")?;
    let chain = certificates(&cert_pem, cert)?;
    let private = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| tls_error!("{}: no usable PEM private key found ({e})", key.display()))?;
    // Build the rustls configuration once here: it checks that the key parses and matches.
    rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, private))
        .map_err(|e| {
            tls_error!("{} with {}: unusable certificate and key: {e}", cert.display(), key.display())
        })?;
    Ok(ServerTlsConfig::new().identity(Identity::from_pem(cert_pem, key_pem)))
}

/// Client side: an endpoint for `url`. An `https://` URL needs `ca`, the PEM certificate(s) to
/// trust (the CA that signed the coordinator's certificate, or that certificate itself if it is
/// self-signed); a plain `http://` URL takes none.
pub fn endpoint(url: &str, ca: Option<&Path>) -> Result<Endpoint, TlsError> {
    let endpoint =
        Endpoint::from_shared(url.to_string()).map_err(|e| tls_error!("bad address {url}: {e}"))?;
    let https = endpoint.uri().scheme_str() == Some("https");
    match (https, ca) {
        (false, None) => Ok(endpoint),
        (false, Some(_)) => Err(tls_error!("--ca is for https:// addresses, and {url} is not one")),
        (true, None) => Err(tls_error!(
            "{url} uses TLS: give --ca FILE, the PEM certificate to trust (the CA that signed the \
             coordinator's certificate, or that certificate itself if self-signed)"
        )),
        (true, Some(ca)) => {
            let pem = read(ca, "CA certificate")?;
            let mut roots = rustls::RootCertStore::empty();
            for cert in certificates(&pem, ca)? {
                roots
                    .add(cert)
                    .map_err(|e| tls_error!("{}: not a usable CA certificate: {e}", ca.display()))?;
            }
            endpoint
                .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)))
                .map_err(|e| tls_error!("TLS setup for {url} failed: {e}"))
        }
    }
}

/// An error with its sources, as one line: tonic's own messages ("transport error") hide the
/// cause (refused connection, unknown certificate issuer, ...) in the source chain.
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = e.source();
    }
    text
}

/// Whether `error` comes from TLS itself (an untrusted or unsuitable certificate, or a peer that
/// does not speak TLS): retrying cannot help.
pub fn is_tls_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        // tokio-rustls wraps rustls errors in io::Error, whose source() skips them.
        let inner = e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref());
        if e.is::<rustls::Error>() || inner.is_some_and(|i| i.is::<rustls::Error>()) {
            return true;
        }
        next = e.source();
    }
    false
}

/// A failed call's message with the causes [`tonic::Status`]'s message leaves out.
pub fn describe_status(status: &tonic::Status) -> String {
    let mut text = status.message().to_string();
    if let Some(source) = std::error::Error::source(status) {
        let cause = describe(source);
        if !text.contains(&cause) {
            text.push_str(if text.is_empty() { "" } else { ": " });
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("cubefarm-tls-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn https_needs_a_ca_and_http_takes_none() {
        assert!(endpoint("http://127.0.0.1:1", None).is_ok());
        let err = endpoint("https://127.0.0.1:1", None).unwrap_err().to_string();
        assert!(err.contains("give --ca FILE"), "{err}");
        let err = endpoint("http://127.0.0.1:1", Some(Path::new("ca.pem"))).unwrap_err().to_string();
        assert!(err.contains("--ca is for https://"), "{err}");
    }

    #[test]
    fn bad_files_are_named() {
        let err =
            endpoint("https://127.0.0.1:1", Some(Path::new("/nonexistent/ca.pem"))).unwrap_err().to_string();
        assert!(err.starts_with("cannot read CA certificate /nonexistent/ca.pem"), "{err}");
        let junk = scratch("junk.pem", "not a certificate\n");
        let err = endpoint("https://127.0.0.1:1", Some(&junk)).unwrap_err().to_string();
        assert!(err.contains("no PEM certificate"), "{err}");
        let garbage =
            scratch("garbage.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        let err = endpoint("https://127.0.0.1:1", Some(&garbage)).unwrap_err().to_string();
        assert!(err.contains("not a usable CA certificate"), "{err}");
        let err = server_config(&garbage, &junk).unwrap_err().to_string();
        assert!(err.contains("no usable PEM private key"), "{err}");
        let err = server_config(&junk, &junk).unwrap_err().to_string();
        assert!(err.contains("no PEM certificate"), "{err}");
        let err = server_config(Path::new("/nonexistent/cert.pem"), &junk).unwrap_err().to_string();
        assert!(err.starts_with("cannot read certificate /nonexistent/cert.pem"), "{err}");
        for f in [junk, garbage] {
            std::fs::remove_file(f).unwrap();
        }
    }

    #[test]
    fn a_generated_pair_loads_and_a_mismatched_key_is_refused() {
        let a = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let b = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let cert = scratch("cert.pem", &a.cert.pem());
        let key = scratch("key.pem", &a.signing_key.serialize_pem());
        let other = scratch("other-key.pem", &b.signing_key.serialize_pem());
        assert!(server_config(&cert, &key).is_ok());
        assert!(endpoint("https://localhost:1", Some(&cert)).is_ok());
        let err = server_config(&cert, &other).unwrap_err().to_string();
        assert!(err.contains("unusable certificate and key"), "{err}");
        for f in [cert, key, other] {
            std::fs::remove_file(f).unwrap();
        }
    }
}
