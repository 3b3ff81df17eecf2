//! The command-line adapter: the command tree of a registry whose names
//! clash, and the real `notes` binary on a terminal.

mod command_tree;
mod terminal_escapes;
