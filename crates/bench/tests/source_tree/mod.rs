//! The repository's source files, for the tests that check the shape of the code on them.

use std::path::{Path, PathBuf};

/// The repository's root (this crate is crates/bench).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name ends in one of `extensions`, build outputs aside.
pub fn sources(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !["target", ".git", "__pycache__", "node_modules"].contains(&name) && !name.starts_with('.') {
                found.extend(sources(&path, extensions));
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// `path` from the repository's root, as messages print it.
pub fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string().replace("../", "")
}
