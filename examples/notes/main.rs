//! `notes`: the notes example's binary (see `lib.rs`).

fn main() -> std::process::ExitCode {
    notes::cli::run(Vec::new())
}
