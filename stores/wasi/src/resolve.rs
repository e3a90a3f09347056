//! Identity: the root-relative key of a normalized path with every symlink
//! inside the root resolved, so two spellings of one file share a key, and
//! symlinks that lead out of the root refused at any depth.

use crate::store::{WasiStore, map_io};
use dsh_fs_core::{ErrorCode, FsError};
use std::collections::VecDeque;
use std::fs;
use std::io;
use std::path::Path;

/// Symlinks followed while resolving one path before it counts as a loop.
const MAX_LINKS: u32 = 40;

/// The canonical key of the normalized root-relative `rel`; components past
/// the first missing one (or past a file) are kept as they are.
pub(crate) fn canonical(store: &WasiStore, rel: &str, shown: &str) -> Result<String, FsError> {
    let mut todo: VecDeque<String> = rel.split('/').map(str::to_owned).collect();
    let mut done: Vec<String> = Vec::new();
    let mut links = 0;
    let mut missing = false;
    while let Some(part) = todo.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                done.pop().ok_or_else(|| FsError::sandbox_denied(shown))?;
                continue;
            }
            _ => done.push(part),
        }
        if missing {
            continue;
        }
        let here = store.path(&done.join("/"));
        match fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() => {}
            Ok(_) => continue,
            // Nothing there, or a file used as a directory: the key is
            // the path as spelled, and using it says which.
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                missing = true;
                continue;
            }
            Err(e) => return Err(map_io(e, shown)),
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                format!("{shown} goes through a symbolic link loop"),
            ));
        }
        let link = fs::read_link(&here).map_err(|e| map_io(e, shown))?;
        let link = link
            .to_str()
            .ok_or_else(|| FsError::sandbox_denied(shown))?;
        done.pop();
        let rest = if link.starts_with('/') {
            done.clear();
            Path::new(link)
                .strip_prefix(store.root())
                .map_err(|_| FsError::sandbox_denied(shown))?
                .to_str()
                .expect("a suffix of a str is a str")
        } else {
            link
        };
        for part in rest.split('/').rev() {
            todo.push_front(part.to_owned());
        }
    }
    Ok(done.join("/"))
}
