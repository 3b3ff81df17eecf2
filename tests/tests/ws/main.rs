//! The WebSocket adapter: the transport-agnostic projection (requests,
//! replies, the entry gate, broadcast), the socket server and `WsClient`,
//! the real `notes serve` driven by independent clients and a browser, and
//! questions asked over the socket and answered by a real client.

mod support;

mod asking;
mod notes_browser;
mod notes_clients;
mod notes_live;
mod notes_resources;
mod notes_typed;
mod pressure;
mod projection;
mod server;
