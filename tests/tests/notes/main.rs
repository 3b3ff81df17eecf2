//! The notes example as a whole application: one module of tools serving
//! every surface from one database, `notes demo`, and faults against the
//! real server (kills, restarts, two servers on one database), and the
//! notes board as an MCP App in a real host.

mod app_host;
mod demo;
mod faults;
mod one_module;
mod postgres;
mod resources;
