//! The command-line adapter: the command tree of a registry whose names
//! clash, and the real `notes` binary driven from outside — argv, exit
//! codes, output channels, help, Ctrl-C, a terminal, detached jobs.

mod command_tree;
mod jobs;
mod notes;
mod terminal_escapes;
