//! [`OutboundHttp`]: the one place this crate builds the HTTP clients it
//! reaches other servers with — the resource server's issuer metadata,
//! JWKS and introspection, and `McpClient`'s (so `McpSource`'s and the
//! gateway's) upstreams — with TLS on rustls and the `ring` provider.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

/// Why an [`OutboundHttp`] could not be set up, or could not build a
/// client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutboundHttpError {
    /// The root certificates given are not PEM certificates.
    #[error("{source_name}: no usable PEM certificate ({why}); give one or more `-----BEGIN CERTIFICATE-----` blocks")]
    BadCertificate {
        /// Where the certificates came from (a path, or `PEM text`).
        source_name: String,
        /// What is wrong with them.
        why: String,
    },
    /// The certificate file could not be read.
    #[error("cannot read the certificate file {path}: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// rustls refused the configuration.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// reqwest refused the configuration.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// How this crate's HTTP clients reach other servers: HTTP/1.1, and
/// HTTPS over rustls with the `ring` provider (TLS 1.2 and 1.3), trusting
///
/// * the **platform's store** (through rustls-platform-verifier: the
///   system's CA bundle on Linux — or the files `SSL_CERT_FILE` /
///   `SSL_CERT_DIR` name, which then replace it —, the OS verifier on
///   macOS and Windows, with the roots an administrator installed), and
/// * the certificates **added** here: a private CA that signs an internal
///   issuer or upstream ([`root_certificates_pem`](Self::root_certificates_pem),
///   [`root_certificates_file`](Self::root_certificates_file)), alone when
///   [`only_added_roots`](Self::only_added_roots) says so.
///
/// Every client is built with its own rustls configuration naming `ring`,
/// so none depends on a process-wide default provider. The clients other
/// crates build in this process — rmcp's OAuth discovery and the OTLP
/// exporter share this crate's reqwest — do; where this crate hands work
/// to them it first installs `ring` as that default, unless the
/// application installed one ([`install_default_provider`]).
///
/// A certificate that does not chain to a trusted root fails the request
/// (the issuer's keys are not fetched, the token is refused); there is no
/// switch to skip verification.
///
/// ```
/// use gonk_tools::adapters::http::OutboundHttp;
/// use gonk_tools::adapters::http::oauth::JwtVerifier;
///
/// # fn run(private_ca_pem: &str) -> Result<(), Box<dyn std::error::Error>> {
/// let http = OutboundHttp::new().root_certificates_pem(private_ca_pem)?;
/// let verifier = JwtVerifier::new("https://idp.internal")?.http_client(http.client()?);
/// # let _ = verifier;
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct OutboundHttp {
    added: Vec<CertificateDer<'static>>,
    only_added: bool,
}

impl fmt::Debug for OutboundHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutboundHttp")
            .field("added_roots", &self.added.len())
            .field("only_added_roots", &self.only_added)
            .finish()
    }
}

impl OutboundHttp {
    /// The platform's roots, nothing added.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also trusts every certificate in `pem` (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks) as a root.
    pub fn root_certificates_pem(self, pem: impl AsRef<[u8]>) -> Result<Self, OutboundHttpError> {
        self.add_pem(pem.as_ref(), "PEM text")
    }

    /// Also trusts every certificate in the PEM file at `path` as a root.
    pub fn root_certificates_file(self, path: impl AsRef<Path>) -> Result<Self, OutboundHttpError> {
        let path = path.as_ref();
        let pem = std::fs::read(path).map_err(|source| OutboundHttpError::Unreadable {
            path: path.to_owned(),
            source,
        })?;
        self.add_pem(&pem, &path.display().to_string())
    }

    /// Trusts only the added roots, not the platform's: pins an internal
    /// deployment to its own CA (and works where the system has no CA
    /// bundle at all).
    pub fn only_added_roots(mut self) -> Self {
        self.only_added = true;
        self
    }

    /// Whether roots were added (a client other code builds would not
    /// trust them).
    #[cfg(all(feature = "mcp", feature = "oauth"))]
    pub(crate) fn adds_roots(&self) -> bool {
        !self.added.is_empty()
    }

    fn add_pem(mut self, pem: &[u8], source_name: &str) -> Result<Self, OutboundHttpError> {
        let bad = |why: String| OutboundHttpError::BadCertificate {
            source_name: source_name.to_owned(),
            why,
        };
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| bad(error.to_string()))?;
        if certs.is_empty() {
            return Err(bad("no certificate block".to_owned()));
        }
        // A certificate the verifier cannot use is refused here, not at
        // the first request.
        let mut check = RootCertStore::empty();
        for cert in &certs {
            check
                .add(cert.clone())
                .map_err(|error| bad(error.to_string()))?;
        }
        self.added.extend(certs);
        Ok(self)
    }

    /// A client with this TLS configuration.
    pub fn client(&self) -> Result<reqwest::Client, OutboundHttpError> {
        self.client_builder()?
            .build()
            .map_err(|error| OutboundHttpError::Client(error_chain(&error)))
    }

    /// A reqwest builder with this TLS configuration, to set more on
    /// (timeouts, a proxy, a redirect policy) before building.
    pub fn client_builder(&self) -> Result<reqwest::ClientBuilder, OutboundHttpError> {
        Ok(reqwest::Client::builder().tls_backend_preconfigured(self.tls_config()?))
    }

    fn tls_config(&self) -> Result<ClientConfig, OutboundHttpError> {
        if self.added.is_empty() && !self.only_added {
            // The platform's store is read once per process, not per client.
            static PLATFORM: OnceLock<Result<ClientConfig, String>> = OnceLock::new();
            return PLATFORM
                .get_or_init(|| self.build_tls_config().map_err(|error| error.to_string()))
                .clone()
                .map_err(OutboundHttpError::Tls);
        }
        self.build_tls_config()
            .map_err(|error| OutboundHttpError::Tls(error.to_string()))
    }

    fn build_tls_config(&self) -> Result<ClientConfig, rustls::Error> {
        let provider = ring_provider();
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()?;
        let platform = if self.only_added {
            None
        } else {
            match rustls_platform_verifier::Verifier::new_with_extra_roots(
                self.added.iter().cloned(),
                provider,
            ) {
                Ok(verifier) => Some(verifier),
                Err(error) => {
                    // No CA bundle (a `scratch` image): plain HTTP and the
                    // added roots still work; every other HTTPS request
                    // fails its handshake.
                    tracing::warn!(
                        target: "gonk_tools::adapters::http",
                        %error,
                        "the platform's TLS roots could not be loaded, so HTTPS servers are not trusted unless their CA is added: install the CA bundle (e.g. `ca-certificates`), set SSL_CERT_FILE, or use OutboundHttp::root_certificates_pem"
                    );
                    None
                }
            }
        };
        let mut config = match platform {
            Some(verifier) => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth(),
            None => {
                let mut roots = RootCertStore::empty();
                for cert in &self.added {
                    roots.add(cert.clone())?;
                }
                builder.with_root_certificates(roots).with_no_client_auth()
            }
        };
        // reqwest is built without HTTP/2.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }
}

fn ring_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Installs `ring` as rustls's process-wide default provider unless one is
/// installed already (by the application, or an earlier call). The clients
/// [`OutboundHttp`] builds do not need it; reqwest clients other code
/// builds without naming a provider do — this crate's reqwest has no
/// built-in one, and such a client panics without a default. This crate
/// calls it before rmcp's OAuth discovery and the OTLP exporter build
/// theirs; an application that builds its own `reqwest::Client::new()`
/// calls it first (or installs the provider it prefers).
pub fn install_default_provider() {
    if CryptoProvider::get_default().is_none() {
        // Lost a race with another installer: theirs stands, as wanted.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// `error` and its sources, `: `-joined: reqwest's own message names only
/// the URL, the cause (an untrusted certificate, a refused connection) is
/// in its sources.
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_is_not_a_certificate_is_refused_when_added() {
        let error = OutboundHttp::new()
            .root_certificates_pem("not a certificate")
            .expect_err("no PEM block");
        assert!(
            error.to_string().contains("no usable PEM certificate"),
            "{error}"
        );
        let error = OutboundHttp::new()
            .root_certificates_pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
            .expect_err("not DER inside");
        assert!(
            matches!(error, OutboundHttpError::BadCertificate { .. }),
            "{error}"
        );
        let error = OutboundHttp::new()
            .root_certificates_file("/nonexistent/ca.pem")
            .expect_err("no file");
        assert!(error.to_string().contains("/nonexistent/ca.pem"), "{error}");
    }

    #[test]
    fn a_client_builds_without_a_process_default_provider() {
        // reqwest's own choice of provider panics when no process default
        // is installed, as in a binary that never calls
        // `install_default_provider`.
        OutboundHttp::new().client().expect("builds on ring");
        OutboundHttp::new()
            .only_added_roots()
            .client()
            .expect("builds on ring");
    }
}
