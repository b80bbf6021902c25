//! Encodings in files: who may read what is written, whether an existing file may be
//! replaced, and reads bounded by what a legitimate file can hold.
//!
//! A secret key's file is created readable by its owner only (mode 0600 on Unix, whatever the
//! umask) and a secret directory accessible by its owner only (0700); a file is replaced by
//! renaming a complete copy over it, so a failed write never leaves half a key behind; and
//! reading refuses what is not a regular file (a FIFO would block, `/dev/zero` never ends).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::error::{Result, SchemeError};

/// Who may read a file or directory that pimhe creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Public material (public keys, ciphertexts): the process's umask decides.
    Public,
    /// Secret material: the owner only (files 0600, directories 0700 on Unix).
    Secret,
}

/// What a write does when its file already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replace it, atomically (a complete copy is renamed over it).
    Replace,
    /// Refuse, leaving it untouched.
    Refuse,
}

/// Writes an encoding to a file, replacing any file there (public access).
pub fn save(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    save_with(path, bytes, Access::Public, Existing::Replace)
}

/// Writes a secret's encoding to a file readable by its owner only, replacing any file there.
///
/// ```
/// use pimhe_schemes::serial;
/// let path = std::env::temp_dir().join(format!("pimhe-doc-secret-{}", std::process::id()));
/// serial::save_secret(&path, b"not really a key").unwrap();
/// #[cfg(unix)]
/// {
///     use std::os::unix::fs::PermissionsExt;
///     assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
/// }
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn save_secret(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    save_with(path, bytes, Access::Secret, Existing::Replace)
}

/// Writes `bytes` to `path` with `access`; an existing file is replaced atomically or left
/// untouched and refused, as `existing` says.
///
/// ```
/// use pimhe_schemes::serial::{self, Access, Existing};
/// let path = std::env::temp_dir().join(format!("pimhe-doc-once-{}", std::process::id()));
/// serial::save_with(&path, b"first", Access::Public, Existing::Refuse).unwrap();
/// let refused = serial::save_with(&path, b"second", Access::Public, Existing::Refuse).unwrap_err();
/// assert!(refused.to_string().contains("already exists"));
/// assert_eq!(&serial::load(&path).unwrap()[..], b"first");
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn save_with(path: impl AsRef<Path>, bytes: &[u8], access: Access, existing: Existing) -> Result<()> {
    let path = path.as_ref();
    let failed = |e: std::io::Error| SchemeError::Io(format!("cannot write {}: {e}", path.display()));
    match existing {
        Existing::Refuse => {
            let mut file = open_new(path, access).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => SchemeError::Io(format!(
                    "{} already exists; it is left as it is (remove it, or choose another path)",
                    path.display()
                )),
                _ => failed(e),
            })?;
            if let Err(e) = file.write_all(bytes).and_then(|()| file.sync_all()) {
                // The file is this call's own: a partial one must not pass for a whole.
                let _ = std::fs::remove_file(path);
                return Err(failed(e));
            }
            Ok(())
        }
        Existing::Replace => {
            let temporary = temporary_beside(path);
            let written = open_new(&temporary, access).and_then(|mut file| {
                file.write_all(bytes)?;
                file.sync_all()
            });
            if let Err(e) = written.and_then(|()| std::fs::rename(&temporary, path)) {
                let _ = std::fs::remove_file(&temporary);
                return Err(failed(e));
            }
            Ok(())
        }
    }
}

/// Creates `dir` (and its parents) for material of `access`. A secret directory is created
/// accessible by its owner only; an existing one that others can enter or read is refused
/// rather than silently changed (it may be a directory the user shares on purpose).
pub fn create_dir(dir: impl AsRef<Path>, access: Access) -> Result<()> {
    let dir = dir.as_ref();
    let failed = |e: std::io::Error| SchemeError::Io(format!("cannot create {}: {e}", dir.display()));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if access == Access::Secret {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(failed)?;
    #[cfg(unix)]
    if access == Access::Secret {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).map_err(failed)?.permissions().mode() & 0o777;
        // Only a directory that was there before can be open to others: the umask cannot add
        // bits to 0700.
        if mode & 0o077 != 0 {
            return Err(SchemeError::Io(format!(
                "{} is open to other users (mode {mode:03o}); a secret directory must be the owner's only: \
                 chmod 700 it, or name a new directory",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Reads a file written by [`save`], for an object's `from_bytes`. The bytes are wiped when
/// dropped, since they may hold a secret key. Refuses what is not a regular file, or is larger
/// than [`MAX_FILE_BYTES`].
///
/// ```
/// use pimhe_schemes::bfv::BfvParameters;
/// use pimhe_schemes::serial;
/// let path = std::env::temp_dir().join(format!("pimhe-doc-{}.params", std::process::id()));
/// let params = BfvParameters::preset(2048).unwrap();
/// serial::save(&path, &params.to_bytes()).unwrap();
/// assert_eq!(BfvParameters::from_bytes(&serial::load(&path).unwrap()).unwrap(), params);
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<Zeroizing<Vec<u8>>> {
    load_at_most(path, MAX_FILE_BYTES)
}

/// The most bytes [`load`] reads: far above any pimhe object (the largest, a full set of Galois
/// keys at N = 2^16, is a few GiB), far below what a sparse file can claim.
pub const MAX_FILE_BYTES: u64 = 1 << 34;

/// [`load`], refusing a file of more than `max_bytes` bytes before reading it (a legitimate
/// file's size is known from its parameters: anything larger is another file or an attack).
///
/// ```
/// use pimhe_schemes::serial;
/// assert!(serial::load_at_most("/dev/zero", 1 << 20).unwrap_err().to_string().contains("not a regular file"));
/// ```
pub fn load_at_most(path: impl AsRef<Path>, max_bytes: u64) -> Result<Zeroizing<Vec<u8>>> {
    let path = path.as_ref();
    let failed = |e: std::io::Error| SchemeError::Io(format!("cannot read {}: {e}", path.display()));
    // metadata() follows links and never blocks, where opening a FIFO would.
    let metadata = std::fs::metadata(path).map_err(failed)?;
    if !metadata.is_file() {
        return Err(SchemeError::Io(format!(
            "{} is not a regular file (a {}); pimhe reads its objects from regular files only",
            path.display(),
            file_kind(&metadata)
        )));
    }
    if metadata.len() > max_bytes {
        return Err(SchemeError::Io(format!(
            "{} has {} bytes; a file of this kind has at most {max_bytes}",
            path.display(),
            metadata.len()
        )));
    }
    let mut bytes = Zeroizing::new(Vec::new());
    // A sparse file can claim terabytes: its room is asked for, not assumed, so that a file too
    // large for this machine is an error rather than an abort.
    let room = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
    bytes.try_reserve_exact(room).map_err(|_| {
        SchemeError::Io(format!(
            "{} has {} bytes, more than this machine can hold in memory to read it",
            path.display(),
            metadata.len()
        ))
    })?;
    // The file may grow between the check and the read: read one byte past the bound at most.
    File::open(path).and_then(|f| f.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)).map_err(failed)?;
    if bytes.len() as u64 > max_bytes {
        return Err(SchemeError::Io(format!(
            "{} grew past {max_bytes} bytes while being read; a file of this kind has at most that",
            path.display()
        )));
    }
    Ok(bytes)
}

/// What a non-regular file is, for messages.
fn file_kind(metadata: &std::fs::Metadata) -> &'static str {
    let kind = metadata.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "device";
        }
        if kind.is_socket() {
            return "socket";
        }
    }
    if kind.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Creates a file that must not exist yet, with `access`'s permissions from the start (so a
/// secret is never readable by others, not even for a moment).
fn open_new(path: &Path, access: Access) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if access == Access::Secret {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = access;
    options.open(path)
}

/// A name for the temporary copy of `path` in its own directory (so that renaming it over
/// `path` stays on one file system): hidden, and unique to this process and call.
fn temporary_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let unique = format!(".{name}.{}-{}.partial", std::process::id(), CALLS.fetch_add(1, Ordering::Relaxed));
    path.with_file_name(unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pimhe-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn replace_swaps_the_whole_file_and_leaves_no_temporary() {
        let dir = scratch("replace");
        let path = dir.join("object");
        save(&path, b"old").unwrap();
        save(&path, b"new contents").unwrap();
        assert_eq!(&load(&path).unwrap()[..], b"new contents");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn secrets_are_the_owners_whatever_was_there_before() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("secret");
        let path = dir.join("key");
        std::fs::write(&path, b"public").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        save_secret(&path, b"secret").unwrap();
        assert_eq!(mode(&path), 0o600);
        let refused = dir.join("refused");
        save_with(&refused, b"secret", Access::Secret, Existing::Refuse).unwrap();
        assert_eq!(mode(&refused), 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn secret_directories_are_created_private_and_open_ones_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("dirs");
        let private = dir.join("a/b");
        create_dir(&private, Access::Secret).unwrap();
        assert_eq!(mode(&private), 0o700);
        // Existing and private: accepted again.
        create_dir(&private, Access::Secret).unwrap();
        let open = dir.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(create_dir(&open, Access::Secret).unwrap_err().to_string().contains("chmod 700"));
        assert_eq!(mode(&open), 0o755, "an existing directory is not changed");
        create_dir(&open, Access::Public).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn bounded_reads_refuse_large_and_special_files() {
        let dir = scratch("bounded");
        let path = dir.join("object");
        save(&path, &[7u8; 100]).unwrap();
        assert_eq!(load_at_most(&path, 100).unwrap().len(), 100);
        assert!(load_at_most(&path, 99).unwrap_err().to_string().contains("at most 99"));
        assert!(load(&dir).unwrap_err().to_string().contains("directory"));
        // A sparse file of a terabyte: refused for its size, not read, not aborted on.
        let huge = dir.join("huge");
        std::fs::File::create(&huge).unwrap().set_len(1 << 40).unwrap();
        assert!(load_at_most(&huge, 1 << 20).unwrap_err().to_string().contains("at most"));
        assert!(load(&huge).unwrap_err().to_string().contains(&format!("at most {MAX_FILE_BYTES}")));
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|s| s.success()) {
                // Would block forever if it were opened.
                assert!(load(&fifo).unwrap_err().to_string().contains("FIFO"));
            }
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
