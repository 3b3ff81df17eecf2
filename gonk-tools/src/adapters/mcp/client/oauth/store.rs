//! Where a client keeps its tokens between requests and between runs. The
//! store trait and the in-memory store are rmcp's
//! ([`CredentialStore`], [`InMemoryCredentialStore`]); the file store is
//! ours: a JSON file only its owner may read (`0600`), written whole and
//! renamed into place, so a crash never leaves half a token behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

/// A [`CredentialStore`] in a file: the client id, the token response
/// (access and refresh token), the granted scopes and the issuer, as JSON.
///
/// The file is created with mode `0600` (on Unix) and rewritten atomically;
/// a file that others may read is refused when loaded (its tokens may have
/// leaked: `chmod 600` it, or log in again). What was read is kept in
/// memory and read again when the file changes (another process logged
/// in); refreshes within this process take turns.
///
/// ```no_run
/// use gonk_tools::adapters::mcp::oauth::{FileCredentialStore, LoopbackRedirect, OAuthOptions};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let options = OAuthOptions::new()
///     .credential_store(FileCredentialStore::new("/home/me/.config/app/notes-token.json"))
///     .redirect(LoopbackRedirect::bind(0).await?);
/// # let _ = options;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct FileCredentialStore {
    inner: Arc<FileStoreInner>,
}

#[derive(Debug)]
struct FileStoreInner {
    path: PathBuf,
    /// What the file held when last read or written, and its stamp then.
    cached: tokio::sync::Mutex<Option<Cached>>,
    /// Held across a refresh and its save (rmcp's refresh guard).
    refreshing: Arc<tokio::sync::Mutex<()>>,
}

impl FileCredentialStore {
    /// A store in the file at `path` (created, with its directory, on the
    /// first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileCredentialStore {
            inner: Arc::new(FileStoreInner {
                path: path.into(),
                cached: tokio::sync::Mutex::new(None),
                refreshing: Arc::default(),
            }),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }
}

/// The file's contents as last read, with the stamp they were read at.
#[derive(Debug)]
struct Cached {
    stamp: Option<Stamp>,
    credentials: Option<StoredCredentials>,
}

/// What tells that a file changed: its modification time, length and (on
/// Unix) inode, which a rename-into-place always changes (`None`: no
/// file).
type Stamp = (std::time::SystemTime, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
    #[cfg(not(unix))]
    let inode = 0;
    Some((metadata.modified().ok()?, metadata.len(), inode))
}

fn store_error(path: &Path, what: &str, error: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("{what} {}: {error}", path.display()))
}

/// Reads the file: `None` when there is none; an error when others may read
/// it or it is not a credentials file.
fn read(path: &Path) -> Result<Option<StoredCredentials>, AuthError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(store_error(path, "cannot read the token file", error)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| store_error(path, "cannot read the token file", e))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(AuthError::CredentialStoreError(format!(
                "the token file {} may be read by others (mode {:o}); its tokens may have leaked: run `chmod 600 {}` or delete it and log in again",
                path.display(),
                mode & 0o777,
                path.display()
            )));
        }
    }
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| store_error(path, "the token file is not a credentials file", e))
}

/// Writes `credentials` to a `0600` file beside `path`, then renames it
/// over `path`.
fn write(path: &Path, credentials: &StoredCredentials) -> Result<(), AuthError> {
    use std::io::Write;
    let text = serde_json::to_vec_pretty(credentials)
        .map_err(|e| store_error(path, "cannot encode the tokens for", e))?;
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| store_error(path, "cannot create the directory of", e))?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&temporary).and_then(|mut file| {
        file.write_all(&text)?;
        file.sync_all()
    });
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(store_error(path, "cannot write the token file", error));
    }
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        store_error(path, "cannot write the token file", e)
    })
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut cached = self.inner.cached.lock().await;
        let current = stamp(&self.inner.path);
        if let Some(kept) = cached.as_ref().filter(|kept| kept.stamp == current) {
            return Ok(kept.credentials.clone());
        }
        let path = self.inner.path.clone();
        let loaded = tokio::task::spawn_blocking(move || read(&path))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))??;
        *cached = Some(Cached {
            stamp: current,
            credentials: loaded.clone(),
        });
        Ok(loaded)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut cached = self.inner.cached.lock().await;
        let path = self.inner.path.clone();
        let saved = credentials.clone();
        tokio::task::spawn_blocking(move || write(&path, &saved))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))??;
        *cached = Some(Cached {
            stamp: stamp(&self.inner.path),
            credentials: Some(credentials),
        });
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let mut cached = self.inner.cached.lock().await;
        match std::fs::remove_file(&self.inner.path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(store_error(
                    &self.inner.path,
                    "cannot remove the token file",
                    error,
                ))
            }
        }
        *cached = Some(Cached {
            stamp: None,
            credentials: None,
        });
        Ok(())
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = Arc::clone(&self.inner.refreshing).lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

/// A shared store as rmcp's manager takes it (by value, `'static`).
#[derive(Clone)]
pub(super) struct SharedStore(pub(super) Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::auth::OAuthTokenResponse;

    fn credentials(token: &str) -> StoredCredentials {
        let response: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": "r-1",
            "scope": "notes:read",
        }))
        .expect("a token response");
        StoredCredentials::new(
            "client-1".into(),
            Some(response),
            vec!["notes:read".into()],
            Some(1_700_000_000),
        )
        .with_issuer(Some("https://as.example".into()))
    }

    #[tokio::test]
    async fn a_saved_token_reads_back_from_a_file_only_its_owner_may_read() {
        let dir = std::env::temp_dir().join(format!("gonk-tokens-{}", std::process::id()));
        let path = dir.join("nested").join("upstream.json");
        let store = FileCredentialStore::new(&path);
        assert!(store.load().await.expect("no file is no tokens").is_none());
        store.save(credentials("t-1")).await.expect("saved");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
        }
        // A new store (a later run) reads the file.
        let later = FileCredentialStore::new(&path);
        let loaded = later.load().await.expect("loads").expect("stored");
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.granted_scopes, ["notes:read"]);
        assert_eq!(loaded.issuer.as_deref(), Some("https://as.example"));
        let token = serde_json::to_value(loaded.token_response.unwrap()).unwrap();
        assert_eq!(token["access_token"], "t-1");
        assert_eq!(token["refresh_token"], "r-1");
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["upstream.json"]);
        // Another process logs in: the first store sees its token.
        FileCredentialStore::new(&path)
            .save(credentials("t-2"))
            .await
            .expect("saved");
        let seen = store.load().await.expect("loads").expect("stored");
        let token = serde_json::to_value(seen.token_response.unwrap()).unwrap();
        assert_eq!(token["access_token"], "t-2");
        later.clear().await.expect("cleared");
        assert!(!path.exists());
        assert!(later.load().await.unwrap().is_none());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_token_file_others_may_read_is_refused_with_what_to_do() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("gonk-open-{}.json", std::process::id()));
        FileCredentialStore::new(&path)
            .save(credentials("t-1"))
            .await
            .expect("saved");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = FileCredentialStore::new(&path).load().await.unwrap_err();
        let message = error.to_string();
        assert!(message.contains("chmod 600"), "{message}");
        assert!(message.contains("644"), "{message}");
        let _ = std::fs::remove_file(path);
    }

    #[tokio::test]
    async fn the_refresh_guard_lets_one_refresh_at_a_time() {
        let store = FileCredentialStore::new(std::env::temp_dir().join("gonk-guard-unused.json"));
        let first = store.acquire_refresh_guard().await.unwrap();
        let second = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            store.acquire_refresh_guard(),
        )
        .await;
        assert!(second.is_err(), "the second refresh waits for the first");
        drop(first);
        assert!(store.acquire_refresh_guard().await.unwrap().is_some());
    }
}
