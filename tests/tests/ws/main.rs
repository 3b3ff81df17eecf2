//! The WebSocket adapter: the transport-agnostic projection (requests,
//! replies, the entry gate, broadcast), the socket server and `WsClient`,
//! and the real `notes serve` driven by independent clients and a browser.

mod support;

mod notes_browser;
mod notes_clients;
mod notes_live;
mod notes_typed;
mod projection;
mod server;
