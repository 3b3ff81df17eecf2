//! The Pi extension that ships with the crate (`extension.ts`), and
//! [`write_pi_extension`], which writes it out with the command that serves
//! the bridge filled in.

use std::io::{self, Write};

use serde::Serialize;

/// The extension's source as it ships: a template whose launch line is
/// empty (it refuses to run until [`pi_extension_source`] fills it in).
pub const PI_EXTENSION_TEMPLATE: &str = include_str!("extension.ts");

/// The line of the template that [`pi_extension_source`] replaces.
const LAUNCH_LINE: &str =
    "const LAUNCH: Launch = { command: \"\", args: [], name: \"gonk-tools\" }; // gonk-tools:launch";

/// How the extension starts the bridge: a program, its arguments (which
/// end with the subcommand that calls [`serve_pi`](super::serve_pi)), and
/// a name for messages.
///
/// ```
/// use gonk_tools::adapters::pi::{pi_extension_source, PiLaunch};
///
/// let launch = PiLaunch::new("/usr/local/bin/notes").args(["--db", "/home/me/notes.db", "pi"]);
/// let source = pi_extension_source(&launch);
/// assert!(source.contains(r#""command":"/usr/local/bin/notes""#));
/// assert!(source.contains(r#""args":["--db","/home/me/notes.db","pi"]"#));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PiLaunch {
    command: String,
    args: Vec<String>,
    name: String,
}

impl PiLaunch {
    /// Starts `command` (use an absolute path: Pi runs the extension from
    /// any directory). The name defaults to the program's file name.
    pub fn new(command: impl Into<String>) -> Self {
        let command = command.into();
        let name = std::path::Path::new(&command)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("gonk-tools")
            .to_owned();
        PiLaunch {
            command,
            args: Vec::new(),
            name,
        }
    }

    /// Starts the running program itself (its absolute path). Fails when
    /// the path is not UTF-8.
    pub fn current_exe() -> io::Result<Self> {
        let exe = std::env::current_exe()?;
        let exe = exe.into_os_string().into_string().map_err(|path| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the program path {path:?} is not UTF-8; Pi cannot be told to start it"),
            )
        })?;
        Ok(PiLaunch::new(exe))
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The name the extension uses in messages (`notes tool bridge exited …`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The program.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Its arguments.
    pub fn arguments(&self) -> &[String] {
        &self.args
    }
}

/// The extension's source with `launch` filled in: load it with
/// `pi -e ./file.ts`.
pub fn pi_extension_source(launch: &PiLaunch) -> String {
    let json = serde_json::to_string(launch).expect("strings serialize");
    let line = format!("const LAUNCH: Launch = {json}; // gonk-tools:launch");
    debug_assert!(PI_EXTENSION_TEMPLATE.contains(LAUNCH_LINE));
    PI_EXTENSION_TEMPLATE.replacen(LAUNCH_LINE, &line, 1)
}

/// Writes [`pi_extension_source`] to `out`.
pub fn write_pi_extension(mut out: impl Write, launch: &PiLaunch) -> io::Result<()> {
    out.write_all(pi_extension_source(launch).as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_has_exactly_one_launch_line() {
        assert_eq!(PI_EXTENSION_TEMPLATE.matches(LAUNCH_LINE).count(), 1);
        assert_eq!(
            PI_EXTENSION_TEMPLATE.matches("gonk-tools:launch").count(),
            1
        );
    }

    #[test]
    fn the_launch_is_written_as_json_so_any_path_is_quoted_safely() {
        let launch = PiLaunch::new(r#"/opt/my "tools"/bin/notes"#).args(["--db", "a'b\\c", "pi"]);
        let source = pi_extension_source(&launch);
        assert!(!source.contains(LAUNCH_LINE));
        let line = source
            .lines()
            .find(|l| l.ends_with("// gonk-tools:launch"))
            .unwrap();
        let json = line
            .trim_start_matches("const LAUNCH: Launch = ")
            .trim_end_matches("; // gonk-tools:launch");
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["command"], r#"/opt/my "tools"/bin/notes"#);
        assert_eq!(value["args"][1], "a'b\\c");
        assert_eq!(value["name"], "notes");
    }
}
