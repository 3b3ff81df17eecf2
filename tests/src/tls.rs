//! TLS servers for the tests: a certificate authority made at run time
//! (nothing committed expires), a server certificate it signs for
//! `127.0.0.1` and `localhost`, and a terminator that takes TLS on a
//! loopback port and forwards the plain bytes to a server of the test —
//! the mock issuer, an MCP server.

use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// A test CA and the server certificate it signed.
pub struct TestCa {
    ca_pem: String,
    acceptor: TlsAcceptor,
}

impl TestCa {
    /// A fresh CA named `name`, and a certificate for `127.0.0.1` and
    /// `localhost` signed by it.
    pub fn new(name: &str) -> TestCa {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, format!("{name} test CA"));
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("a CA key"))
            .expect("a CA certificate");
        let key = KeyPair::generate().expect("a server key");
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .expect("server params");
        params
            .distinguished_name
            .push(DnType::CommonName, format!("{name} test server"));
        let cert = params.signed_by(&key, &ca).expect("a server certificate");
        let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .expect("a server configuration");
        TestCa {
            ca_pem: ca.pem(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        }
    }

    /// The CA's certificate, PEM: what a client adds to trust the server.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Takes TLS on `listener` and forwards each connection's plain bytes
    /// to `backend`, until the runtime ends. A handshake the client
    /// abandons (it did not trust the certificate) ends that connection
    /// only.
    pub fn terminate(&self, listener: TcpListener, backend: SocketAddr) {
        let acceptor = self.acceptor.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(socket).await else {
                        return;
                    };
                    let Ok(mut plain) = TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    }

    /// A loopback port taking TLS in front of `backend`; its address.
    pub async fn front(&self, backend: SocketAddr) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        self.terminate(listener, backend);
        addr
    }
}
