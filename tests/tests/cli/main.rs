//! The command-line adapter: the command tree of a registry whose names
//! clash, and the real `notes` binary driven from outside — argv, exit
//! codes, output channels, help, Ctrl-C, a terminal, detached jobs, and
//! asking the human on a real terminal.

mod asking;
mod command_tree;
mod jobs;
mod notes;
mod terminal_escapes;
