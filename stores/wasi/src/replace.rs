//! [`WasiReplace`]: the atomic replacement of one name. The new content goes
//! to a temp file in the same directory, is given the old file's permissions
//! and fsynced, then takes the name under a guard: a create links it only
//! if the name is still free, a guarded replacement stats the name again
//! right before the rename, holding the store's commit lock meanwhile when
//! it has one (WASI has no `flock`: [`crate::lock`]).

use crate::object::{self, WasiObject};
use crate::store::{WasiStore, map_io};
use crate::{lock, meta};
use dsh_fs_core::seam::vanished;
use dsh_fs_core::store::{Guard, Replace, Target};
use dsh_fs_core::{ErrorCode, FsError};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// What every temp file's name ends with, so a leftover is recognisable.
pub const TEMP_SUFFIX: &str = ".dsh-fs-tmp";

/// A replacement of one name in progress. Dropped without
/// [`Replace::commit`], it removes its temp file.
#[derive(Debug)]
pub struct WasiReplace {
    dir: PathBuf,
    name: String,
    shown: String,
    /// The permissions of the file replaced (native builds; WASI 0.2 has no modes).
    perms: Option<fs::Permissions>,
    /// Made on the first write, so a refused call touches nothing.
    temp: Option<NamedTempFile>,
    /// The commit lock to hold from the guard's check to the rename.
    lock: Option<PathBuf>,
}

/// Opens what is at the target (`None` when absent) and checks, or creates,
/// its parent directory. The root itself is a directory, not a file.
pub(crate) fn begin(
    store: &WasiStore,
    target: &Target,
    create_parents: bool,
) -> Result<(WasiReplace, Option<WasiObject>), FsError> {
    let shown = target.display_path();
    let Some(name) = target.name() else {
        return Err(FsError::new(
            ErrorCode::NotRegularFile,
            format!("{shown} is the workspace root, a directory"),
        ));
    };
    let path = store.path(target.key());
    let dir = path.parent().expect("a named key has a parent").to_owned();
    match fs::symlink_metadata(&dir) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound && create_parents => {
            fs::create_dir_all(&dir).map_err(|e| map_io(e, shown))?;
        }
        Err(e) => return Err(map_io(e, shown)),
    }
    let current = match object::open_regular(&path, shown) {
        Ok(object) => Some(object),
        Err(e) if e.code == ErrorCode::NotFound => None,
        Err(e) => return Err(e),
    };
    let replace = WasiReplace {
        dir,
        name: name.to_owned(),
        shown: shown.to_owned(),
        perms: current.as_ref().and_then(|o| permissions(o.file())),
        temp: None,
        lock: store
            .lock_dir()
            .map(|dir| lock::path(dir, store.root(), target.key())),
    };
    Ok((replace, current))
}

impl WasiReplace {
    /// The path named in messages.
    #[cfg(all(target_arch = "wasm32", feature = "component"))]
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The temp file, made beside the target on first use.
    fn temp(&mut self) -> io::Result<&mut NamedTempFile> {
        if self.temp.is_none() {
            let temp = tempfile::Builder::new()
                .prefix(&format!(".{}.", self.name))
                .suffix(TEMP_SUFFIX)
                .tempfile_in(&self.dir)?;
            self.temp = Some(temp);
        }
        Ok(self.temp.as_mut().expect("made above"))
    }
}

impl Replace for WasiReplace {
    type Object = WasiObject;

    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError> {
        self.temp()
            .and_then(|temp| temp.write_all(bytes))
            .map_err(|e| map_io(e, &self.shown))
    }

    fn commit(mut self, guard: Guard<'_>) -> Result<String, FsError> {
        self.temp().map(drop).map_err(|e| map_io(e, &self.shown))?;
        let temp = self.temp.take().expect("made above");
        let shown = std::mem::take(&mut self.shown);
        let written = (|| {
            if let Some(perms) = self.perms.take() {
                temp.as_file().set_permissions(perms)?;
            }
            temp.as_file().sync_all()
        })();
        written.map_err(|e| map_io(e, &shown))?;
        let target = self.dir.join(&self.name);
        let _held = match self.lock.take() {
            Some(lock) => Some(lock::take(lock, &shown)?),
            None => None,
        };
        // A failed persist hands the temp file back; dropping it removes it.
        match guard {
            Guard::Absent => temp.persist_noclobber(&target).map_err(|e| {
                if e.error.kind() == io::ErrorKind::AlreadyExists {
                    FsError::new(
                        ErrorCode::NotObserved,
                        format!("{shown} was created by another program meanwhile; read it first"),
                    )
                } else {
                    map_io(e.error, &shown)
                }
            })?,
            Guard::Unchanged(token) => match meta::stat_path(&target) {
                Ok(now) if now.token == token => {
                    temp.persist(&target).map_err(|e| map_io(e.error, &shown))?
                }
                Ok(_) => return Err(FsError::stale(&shown)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(vanished(&shown)),
                Err(e) => return Err(map_io(e, &shown)),
            },
            Guard::None => temp.persist(&target).map_err(|e| map_io(e.error, &shown))?,
        };
        let _ = sync_dir(&self.dir);
        meta::stat_path(&target)
            .map(|m| m.token)
            .map_err(|e| map_io(e, &shown))
    }

    /// Under the commit lock when the store has one, a `stat` right before
    /// the unlink: `wasi:filesystem` has no rename that refuses to replace,
    /// so a neighbour's save landing between the two is removed with it.
    fn remove(mut self, guard: Guard<'_>, shown: &str) -> Result<(), FsError> {
        let Guard::Unchanged(token) = guard else {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                format!("{shown} is removed only while it is a version named; nothing was changed"),
            ));
        };
        let target = self.dir.join(&self.name);
        let _held = match self.lock.take() {
            Some(lock) => Some(lock::take(lock, shown)?),
            None => None,
        };
        match meta::stat_path(&target) {
            Ok(now) if now.token == token => {}
            Ok(_) => return Err(FsError::stale(shown)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(vanished(shown)),
            Err(e) => return Err(map_io(e, shown)),
        }
        std::fs::remove_file(&target).map_err(|e| map_io(e, shown))?;
        let _ = sync_dir(&self.dir);
        Ok(())
    }
}

/// Durability of a rename or unlink in `dir`; a runtime that cannot open
/// or sync directories still has the renamed, fsynced file. Opened as
/// `DIR/.`, which resolves only through a directory: a FIFO put in the
/// directory's place is never opened, so never waited on. Whether it was
/// synced.
pub(crate) fn sync_dir(dir: &Path) -> bool {
    File::open(dir.join(".")).is_ok_and(|d| d.sync_all().is_ok())
}

/// The permissions a replacement keeps.
#[cfg(unix)]
fn permissions(file: &File) -> Option<fs::Permissions> {
    file.metadata().ok().map(|m| m.permissions())
}

/// WASI 0.2 has no file modes: a replaced file there gets the runtime's default mode.
#[cfg(not(unix))]
fn permissions(_: &File) -> Option<fs::Permissions> {
    None
}
