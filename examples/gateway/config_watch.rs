//! Reload on file change: the config's modification time and length are
//! looked at once a second while serving, and a change reloads it as
//! SIGHUP does. A poll of one `stat` a second needs no new dependency and
//! sees every way editors save (in place, or a new file renamed over the
//! old, which file-event watchers must re-arm for).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How often the config file is looked at.
pub const POLL: Duration = Duration::from_secs(1);

/// What a change of the file changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
    })
}

/// The config file and how it looked at the last look.
pub struct ConfigWatch {
    path: PathBuf,
    last: Option<Stamp>,
}

impl ConfigWatch {
    /// Starts watching `path` as it is now.
    pub fn new(path: PathBuf) -> ConfigWatch {
        let last = stamp(&path);
        ConfigWatch { path, last }
    }

    /// Whether the file changed since the last look (a file that cannot
    /// be read is no change: the old config stays until it is back).
    pub fn changed(&mut self) -> bool {
        let now = stamp(&self.path);
        if now.is_none() || now == self.last {
            return false;
        }
        self.last = now;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_is_a_change_and_a_missing_file_is_not() {
        let dir = std::env::temp_dir().join(format!("gw-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.json");
        std::fs::write(&path, "{}").unwrap();
        let mut watch = ConfigWatch::new(path.clone());
        assert!(!watch.changed());
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        assert!(watch.changed());
        assert!(!watch.changed());
        std::fs::remove_file(&path).unwrap();
        assert!(!watch.changed());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
