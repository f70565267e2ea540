//! Where a client's tokens are kept between calls and between runs.

use std::collections::HashMap;
use std::error::Error;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The most a token file may hold: a few hundred servers' tokens.
const MAX_TOKEN_FILE_BYTES: u64 = 4 << 20;

/// One server's sign-in: the client id it was registered under, its tokens
/// (access and refresh), the scopes granted, when they were received and
/// the issuer that minted them. Serializable, for a store that writes it
/// out; `Debug` never shows a token.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StoredTokens {
    inner: StoredCredentials,
}

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl StoredTokens {
    /// The client id at the authorization server.
    pub fn client_id(&self) -> &str {
        &self.inner.client_id
    }

    /// The issuer that minted the tokens, when known.
    pub fn issuer(&self) -> Option<&str> {
        self.inner.issuer.as_deref()
    }

    /// The access token, when there is one.
    pub fn access_token(&self) -> Option<String> {
        self.token_field("access_token")
    }

    /// The refresh token, when the authorization server gave one.
    pub fn refresh_token(&self) -> Option<String> {
        self.token_field("refresh_token")
    }

    /// A string field of the token response, read from its JSON form.
    fn token_field(&self, name: &str) -> Option<String> {
        let response = serde_json::to_value(self.inner.token_response.as_ref()?).ok()?;
        response.get(name)?.as_str().map(str::to_owned)
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        &self.inner.granted_scopes
    }
}

/// Where signed-in servers' tokens are kept, by the server's URL (a token
/// is for one resource: two entries reaching the same URL share it).
///
/// [`MemoryTokenStore`] keeps them for the life of the process (the
/// default); [`FileTokenStore`] in a file only the user can read. A store
/// of the host's (a keychain, a database) implements these three methods.
#[async_trait]
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept for `server_url`, if any.
    async fn load(
        &self,
        server_url: &str,
    ) -> Result<Option<StoredTokens>, Box<dyn Error + Send + Sync>>;

    /// Keep `tokens` for `server_url`, in place of what was there.
    async fn save(
        &self,
        server_url: &str,
        tokens: StoredTokens,
    ) -> Result<(), Box<dyn Error + Send + Sync>>;

    /// Forget the tokens of `server_url`.
    async fn clear(&self, server_url: &str) -> Result<(), Box<dyn Error + Send + Sync>>;
}

/// Tokens kept in memory, for the life of the process.
#[derive(Debug, Default, Clone)]
pub struct MemoryTokenStore {
    tokens: Arc<Mutex<HashMap<String, StoredTokens>>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredTokens>> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(
        &self,
        server_url: &str,
    ) -> Result<Option<StoredTokens>, Box<dyn Error + Send + Sync>> {
        Ok(self.map().get(server_url).cloned())
    }

    async fn save(
        &self,
        server_url: &str,
        tokens: StoredTokens,
    ) -> Result<(), Box<dyn Error + Send + Sync>> {
        self.map().insert(server_url.to_owned(), tokens);
        Ok(())
    }

    async fn clear(&self, server_url: &str) -> Result<(), Box<dyn Error + Send + Sync>> {
        self.map().remove(server_url);
        Ok(())
    }
}

/// Tokens kept in one JSON file, by server URL, readable and writable by
/// the user alone (mode 0600 on Unix).
///
/// Each save writes a new file beside the old one (created 0600, under a
/// name no one can guess) and renames it over, so a crash leaves the old
/// tokens or the new ones, never half of either. A file that others may
/// read or write, or that another user owns, is refused rather than
/// trusted, as SSH refuses such a key; so is anything but a regular file of
/// at most 4 MiB.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
}

/// One writer at a time within this process, whichever store it uses: two
/// stores of one file would otherwise each drop what the other just saved,
/// and share the temporary file (named by the process).
static WRITING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl FileTokenStore {
    /// Tokens in the file at `path` (made on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file's contents; none when it does not exist yet.
    ///
    /// The checks are made on the opened file, not on its path: a file
    /// swapped for a link or a FIFO between a check and the open cannot
    /// redirect or block the read. The open follows no link and does not
    /// wait for a FIFO's writer.
    fn read_all(&self) -> Result<HashMap<String, StoredTokens>, String> {
        let shown = self.path.display();
        let file = match open_without_following(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
            // Only the message depends on this second look: the open itself
            // refused to follow the link.
            Err(_) if is_a_link(&self.path) => {
                return Err(format!(
                    "token file {shown}: not a regular file (a symbolic link)"
                ));
            }
            Err(e) => return Err(format!("token file {shown}: {e}")),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("token file {shown}: {e}"))?;
        if !meta.file_type().is_file() {
            return Err(format!("token file {shown}: not a regular file"));
        }
        check_private(&meta).map_err(|e| format!("token file {shown}: {e}"))?;
        let mut text = String::new();
        file.take(MAX_TOKEN_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("token file {shown}: {e}"))?;
        if text.len() as u64 > MAX_TOKEN_FILE_BYTES {
            return Err(format!(
                "token file {shown}: larger than {MAX_TOKEN_FILE_BYTES} bytes"
            ));
        }
        if text.trim().is_empty() {
            return Ok(HashMap::new());
        }
        serde_json::from_str(&text).map_err(|e| format!("token file {shown}: {e}"))
    }

    /// Replace the file's contents with `all`, atomically, owner-only.
    fn write_all(&self, all: &HashMap<String, StoredTokens>) -> Result<(), String> {
        let shown = self.path.display();
        let text = serde_json::to_vec_pretty(all).map_err(|e| e.to_string())?;
        let (mut file, fresh) =
            private_sibling(&self.path).map_err(|e| format!("token file {shown}: {e}"))?;
        let written = (|| {
            file.write_all(&text)?;
            file.sync_all()?;
            std::fs::rename(&fresh, &self.path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&fresh);
            return Err(format!("token file {shown}: {e}"));
        }
        Ok(())
    }

    async fn change(
        &self,
        edit: impl FnOnce(&mut HashMap<String, StoredTokens>),
    ) -> Result<(), Box<dyn Error + Send + Sync>> {
        let _one = WRITING.lock().await;
        let mut all = self.read_all()?;
        edit(&mut all);
        Ok(self.write_all(&all)?)
    }
}

#[async_trait]
impl TokenStore for FileTokenStore {
    async fn load(
        &self,
        server_url: &str,
    ) -> Result<Option<StoredTokens>, Box<dyn Error + Send + Sync>> {
        Ok(self.read_all()?.remove(server_url))
    }

    async fn save(
        &self,
        server_url: &str,
        tokens: StoredTokens,
    ) -> Result<(), Box<dyn Error + Send + Sync>> {
        self.change(|all| {
            all.insert(server_url.to_owned(), tokens);
        })
        .await
    }

    async fn clear(&self, server_url: &str) -> Result<(), Box<dyn Error + Send + Sync>> {
        self.change(|all| {
            all.remove(server_url);
        })
        .await
    }
}

/// How many names a save tries for its temporary file before it gives up.
const TEMPORARY_NAMES: usize = 16;

/// A temporary file beside `path` for a save to write and rename over it:
/// `NAME.PID.RANDOM.tmp`, created new (never opened through a link, never
/// one someone else made), only its owner can read and write it. The name
/// is new at every save and cannot be guessed, so nothing planted beside
/// the file (a link, a file, a directory) can be written through or make
/// saves fail; a name that exists is passed over for another.
fn private_sibling(path: &Path) -> std::io::Result<(std::fs::File, PathBuf)> {
    let mut last = None;
    for _ in 0..TEMPORARY_NAMES {
        let candidate = temporary_name(path);
        match private_file(&candidate) {
            Ok(file) => return Ok((file, candidate)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

/// `path`'s name with the process id and 64 random bits after it.
fn temporary_name(path: &Path) -> PathBuf {
    use std::hash::{BuildHasher, Hasher};
    // `RandomState`'s keys come from the system's randomness and differ
    // from one instance to the next: unguessable, which is all a name needs.
    let random = std::hash::RandomState::new().build_hasher().finish();
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.{random:016x}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// `path` opened for reading, refusing a symbolic link at the last step
/// and not waiting for a FIFO's writer (the caller then refuses what is not
/// a regular file).
fn open_without_following(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a symbolic link",
        ));
    }
    options.open(path)
}

/// Whether the last step of `path` is a symbolic link: asked after an open
/// refused it, to say why. Systems differ in the error a refused link gives
/// (`ELOOP` on Linux, `EMLINK` on FreeBSD), and `ELOOP` also means a loop of
/// links higher in the path, so the path is looked at instead.
fn is_a_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

/// A new file at `path` only its owner can read and write; an error if
/// anything is there already (`create_new` follows no link).
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Refuse a token file that others may read or write, or that another user
/// owns (its tokens may have been planted, and it is theirs to change).
#[cfg(unix)]
fn check_private(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: `geteuid` takes nothing, always succeeds and touches no memory.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "it belongs to user {}, not to this process's user ({me}); remove it",
            meta.uid()
        ));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "others may read or write it (mode {mode:o}); make it 0600 (chmod 600) or remove it"
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

/// The SDK's view of a [`TokenStore`]: one server's slot in it.
pub(super) struct Slot {
    pub(super) store: Arc<dyn TokenStore>,
    pub(super) server_url: String,
}

fn store_error(e: Box<dyn Error + Send + Sync>) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl CredentialStore for Slot {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let tokens = self
            .store
            .load(&self.server_url)
            .await
            .map_err(store_error)?;
        Ok(tokens.map(|t| t.inner))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let tokens = StoredTokens { inner: credentials };
        self.store
            .save(&self.server_url, tokens)
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .clear(&self.server_url)
            .await
            .map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(client: &str) -> StoredTokens {
        StoredTokens {
            inner: StoredCredentials::new(client.into(), None, vec!["mcp".into()], Some(1)),
        }
    }

    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolsmith-tokens-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_file_store_keeps_tokens_by_server_in_an_owner_only_file() {
        let dir = scratch("keeps");
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        assert!(store.load("http://a/mcp").await.unwrap().is_none());
        store.save("http://a/mcp", tokens("ca")).await.unwrap();
        store.save("http://b/mcp", tokens("cb")).await.unwrap();
        let again = FileTokenStore::new(&path);
        assert_eq!(
            again
                .load("http://a/mcp")
                .await
                .unwrap()
                .unwrap()
                .client_id(),
            "ca"
        );
        again.clear("http://a/mcp").await.unwrap();
        assert!(again.load("http://a/mcp").await.unwrap().is_none());
        assert_eq!(
            again
                .load("http://b/mcp")
                .await
                .unwrap()
                .unwrap()
                .client_id(),
            "cb"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn hostile_token_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("hostile");
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);

        // Readable by others.
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.load("u").await.unwrap_err().to_string();
        assert!(err.contains("others may read"), "{err}");
        // Writes refuse it too: its tokens may have been planted.
        assert!(store.save("u", tokens("c")).await.is_err());

        // Not a regular file: a directory, a symbolic link, a FIFO (which
        // would block a reader until a writer came).
        let refusal = async || store.load("u").await.unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let err = refusal().await;
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_dir(&path).unwrap();
        let target = dir.join("elsewhere.json");
        std::fs::write(&target, "{}").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let err = refusal().await;
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_file(&path).unwrap();
        let made = std::process::Command::new("mkfifo")
            .args(["-m", "600"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let err = tokio::time::timeout(std::time::Duration::from_secs(10), refusal())
            .await
            .expect("a FIFO is refused without being opened");
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_file(&path).unwrap();

        // Too large, and not JSON.
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(MAX_TOKEN_FILE_BYTES + 10).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = refusal().await;
        assert!(err.contains("larger than"), "{err}");
        std::fs::write(&path, "{not json").unwrap();
        assert!(store.load("u").await.is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The temporary files a save left beside `path`.
    fn leftovers(path: &Path) -> Vec<String> {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|entry| entry.starts_with(&format!("{name}.")))
            .collect()
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn what_is_planted_beside_the_file_is_neither_written_through_nor_in_the_way() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("planted");
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "victim").unwrap();
        // Names a save could be expected to use: the process's, and the
        // one an earlier version used.
        let pid = std::process::id();
        let guesses: Vec<PathBuf> = [format!("tokens.json.{pid}.tmp"), "tokens.json.tmp".into()]
            .into_iter()
            .map(|name| dir.join(name))
            .collect();

        for (round, planted) in ["link", "directory", "open file"].into_iter().enumerate() {
            for guess in &guesses {
                let _ = std::fs::remove_file(guess);
                let _ = std::fs::remove_dir_all(guess);
                match planted {
                    "link" => std::os::unix::fs::symlink(&victim, guess).unwrap(),
                    "directory" => std::fs::create_dir(guess).unwrap(),
                    _ => {
                        std::fs::write(guess, "old").unwrap();
                        std::fs::set_permissions(guess, std::fs::Permissions::from_mode(0o666))
                            .unwrap();
                    }
                }
            }
            let client = format!("c{round}");
            store.save("u", tokens(&client)).await.unwrap_or_else(|e| {
                panic!("a save with a {planted} planted beside the file fails: {e}")
            });
            let kept = store.load("u").await.unwrap().unwrap();
            assert_eq!(kept.client_id(), client, "{planted}");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            // Only what was planted is left: no temporary file of the save's.
            let mut left = leftovers(&path);
            let mut expected = vec![format!("tokens.json.{pid}.tmp"), "tokens.json.tmp".into()];
            left.sort();
            expected.sort();
            assert_eq!(left, expected, "{planted}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn every_save_writes_a_temporary_file_of_a_new_name() {
        let path = Path::new("/nowhere/tokens.json");
        let names: std::collections::HashSet<PathBuf> =
            (0..1000).map(|_| temporary_name(path)).collect();
        assert_eq!(names.len(), 1000);
        assert!(names.iter().all(|name| name.parent() == path.parent()));
    }

    /// A token file of another user's is refused, however private its mode.
    /// Only a process that may give a file away (root) can set this up: it
    /// is skipped, and says so, elsewhere.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_token_file_of_another_user_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("owner");
        let path = dir.join("tokens.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        if std::os::unix::fs::chown(&path, Some(65534), Some(65534)).is_err() {
            eprintln!("skipped: this process cannot give a file to another user");
            return;
        }
        let store = FileTokenStore::new(&path);
        let err = store.load("u").await.unwrap_err().to_string();
        assert!(err.contains("belongs to user 65534"), "{err}");
        assert!(store.save("u", tokens("c")).await.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_stores_of_one_file_lose_no_save() {
        let dir = scratch("two-stores");
        let path = dir.join("tokens.json");
        let (one, two) = (
            Arc::new(FileTokenStore::new(&path)),
            Arc::new(FileTokenStore::new(&path)),
        );
        let saves = (0..40).flat_map(|i| {
            [
                (Arc::clone(&one), format!("a{i}")),
                (Arc::clone(&two), format!("b{i}")),
            ]
        });
        let tasks: Vec<_> = saves
            .map(|(store, url)| tokio::spawn(async move { store.save(&url, tokens("c")).await }))
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(one.read_all().unwrap().len(), 80);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn debug_never_shows_a_token() {
        let shown = format!("{:?}", tokens("client-1"));
        assert!(shown.contains("client-1") && !shown.contains("access_token\": \""));
    }
}
