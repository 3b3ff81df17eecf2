//! The command line on arbitrary argv (NUL-separated arguments, lossy
//! UTF-8): parsing, coercion of flags and positionals into the tool's input,
//! validation and the call. It must never panic and always exit with one
//! of the documented codes.
#![no_main]

use gonk_tools::adapters::cli::Cli;
use gonk_tools_fuzz::{plan_registry, runtime};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut argv = vec!["plan".to_owned()];
    argv.extend(
        data.split(|b| *b == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned()),
    );
    let cli = Cli::new(plan_registry()).name("plan");
    let code = runtime().block_on(cli.run_async(argv));
    // ExitCode has no accessor; its Debug shows the number
    // (`ExitCode(unix_exit_status(2))`).
    let shown = format!("{code:?}");
    let known = [0, 1, 2, 3, 124, 127, 130];
    assert!(
        known.iter().any(|k| shown.ends_with(&format!("({k}))"))),
        "exit code {shown}"
    );
});
