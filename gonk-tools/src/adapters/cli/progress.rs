//! Progress on stderr: a live bar (indicatif) when stderr is a terminal,
//! plain `[progress] …` lines otherwise. The bar is cleared when the call
//! ends.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where progress goes.
pub(crate) enum Progress {
    /// A live bar, created on the first progress event.
    Bar(Option<ProgressBar>),
    /// One line per event on stderr.
    Lines,
}

impl Progress {
    /// A bar when stderr is a terminal, lines otherwise.
    pub(crate) fn for_stderr() -> Self {
        if std::io::stderr().is_terminal() {
            Progress::Bar(None)
        } else {
            Progress::Lines
        }
    }

    /// Shows one progress event.
    pub(crate) fn update(&mut self, percent: Option<f64>, message: Option<&str>) {
        match self {
            Progress::Bar(bar) => {
                let bar = bar.get_or_insert_with(new_bar);
                if let Some(message) = message {
                    // The bar is drawn on a terminal only.
                    bar.set_message(super::terminal::escape_controls(message).into_owned());
                }
                match percent.filter(|p| p.is_finite()) {
                    Some(percent) => bar.set_position(percent.clamp(0.0, 100.0).round() as u64),
                    None => bar.tick(),
                }
            }
            Progress::Lines => {
                let line = match (percent.filter(|p| p.is_finite()), message) {
                    (Some(p), Some(m)) => format!("[progress] {}% {m}", format_percent(p)),
                    (Some(p), None) => format!("[progress] {}%", format_percent(p)),
                    (None, Some(m)) => format!("[progress] {m}"),
                    (None, None) => "[progress]".to_owned(),
                };
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
        }
    }

    /// Runs `f` (which writes to stdout or stderr) with the bar hidden, so
    /// the output does not tear the bar.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match self {
            Progress::Bar(Some(bar)) => bar.suspend(f),
            _ => f(),
        }
    }

    /// Clears the bar (the call has ended).
    pub(crate) fn finish(&mut self) {
        if let Progress::Bar(bar) = self {
            if let Some(bar) = bar.take() {
                bar.finish_and_clear();
            }
        }
    }
}

/// A whole percent, as the bar shows it: `49.6` is `50`.
fn format_percent(percent: f64) -> String {
    format!("{:.0}", percent.clamp(0.0, 100.0).round())
}

fn new_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(100), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{spinner} [{bar:30}] {pos:>3}% {wide_msg}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

#[cfg(test)]
mod tests {
    use super::format_percent;

    #[test]
    fn percents_are_short() {
        assert_eq!(format_percent(50.0), "50");
        assert_eq!(format_percent(33.333), "33");
        assert_eq!(format_percent(49.6), "50");
        assert_eq!(format_percent(250.0), "100");
    }
}
