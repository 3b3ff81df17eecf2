//! The streamable-HTTP listener sets `TCP_NODELAY` on every connection it
//! accepts: without it, each response on a kept-alive connection waits for
//! the client's delayed ACK (the latency itself is measured by
//! `cargo bench -p gonk-tools --features mcp --bench mcp_http`).
//!
//! The server runs in this process, so its accepted socket is one of our
//! file descriptors: the test finds it (local port = the server's, with a
//! peer) and reads the option with `getsockopt`.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::mem::size_of;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::ToolRegistry;

fn port_of(fd: RawFd, peer: bool) -> Option<u16> {
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let ptr = &mut addr as *mut libc::sockaddr_storage as *mut libc::sockaddr;
    // SAFETY: addr is a zeroed sockaddr_storage of the length we pass.
    let rc = unsafe {
        if peer {
            libc::getpeername(fd, ptr, &mut len)
        } else {
            libc::getsockname(fd, ptr, &mut len)
        }
    };
    if rc != 0 || i32::from(addr.ss_family) != libc::AF_INET {
        return None;
    }
    // SAFETY: the family is AF_INET, so the storage holds a sockaddr_in.
    let v4 = unsafe { *(ptr as *const libc::sockaddr_in) };
    Some(u16::from_be(v4.sin_port))
}

fn nodelay(fd: RawFd) -> bool {
    let mut value: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value is a c_int and len its size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            &mut value as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt(TCP_NODELAY) failed on fd {fd}");
    value != 0
}

/// The server-side sockets of connections accepted on `port`.
fn accepted_sockets(port: u16) -> Vec<RawFd> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&fd| port_of(fd, false) == Some(port) && port_of(fd, true).is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepted_connections_have_tcp_nodelay() {
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        ToolRegistry::new(),
        McpHttpOptions::new(McpServerOptions::new("nodelay", "1.0.0")),
    )
    .await
    .unwrap();
    let port = server.local_addr().port();
    let client = tokio::task::spawn_blocking(move || {
        let mut client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // One answered request proves the server accepted the connection.
        write!(
            client,
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/plain\r\n\r\n"
        )
        .unwrap();
        let mut head = [0u8; 12];
        client.read_exact(&mut head).unwrap();
        assert!(head.starts_with(b"HTTP/1.1"), "{head:?}");
        client
    })
    .await
    .unwrap();
    // The check can tell the two apart: the client socket keeps the default.
    assert!(!nodelay(client.as_raw_fd()));
    let accepted = accepted_sockets(port);
    assert_eq!(accepted.len(), 1, "one accepted connection: {accepted:?}");
    assert!(
        nodelay(accepted[0]),
        "the accepted socket lacks TCP_NODELAY"
    );
    drop(client);
    server.shutdown().await.unwrap();
}
