//! An in-memory [`Tree`] for tests and examples: files, directories and
//! dangling-or-not symlinks, each directory's names kept in byte order.

use crate::tree::{DirEntry, DirEntryKind, Tree, join};
use dsh_fs_core::{ErrorCode, FsError};
use std::collections::BTreeMap;
use std::io::Read;

/// A tree held in memory. Directories spring into being under every file.
#[derive(Clone, Debug)]
pub struct MemTree {
    dirs: BTreeMap<String, BTreeMap<String, Node>>,
}

#[derive(Clone, Debug)]
enum Node {
    File(Vec<u8>, Option<u64>),
    Dir,
    Link,
}

impl Default for MemTree {
    fn default() -> Self {
        MemTree {
            dirs: BTreeMap::from([(String::new(), BTreeMap::new())]),
        }
    }
}

impl MemTree {
    /// Adds file `path` with `content`, modified at `modified` ns.
    pub fn file(&mut self, path: &str, content: impl AsRef<[u8]>, modified: u64) -> &mut Self {
        let node = Node::File(content.as_ref().to_vec(), Some(modified));
        self.insert(path, node)
    }

    /// Adds an empty directory `path`.
    pub fn dir(&mut self, path: &str) -> &mut Self {
        self.insert(path, Node::Dir)
    }

    /// Adds a symbolic link at `path` (discovery never follows it).
    pub fn link(&mut self, path: &str) -> &mut Self {
        self.insert(path, Node::Link)
    }

    fn insert(&mut self, path: &str, node: Node) -> &mut Self {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        if !parent.is_empty() && !self.dirs.contains_key(parent) {
            self.insert(parent, Node::Dir);
        }
        if matches!(node, Node::Dir) {
            self.dirs.entry(path.to_owned()).or_default();
        }
        let siblings = self.dirs.entry(parent.to_owned()).or_default();
        siblings.insert(name.to_owned(), node);
        self
    }

    fn node(&self, path: &str) -> Option<&Node> {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        self.dirs.get(parent)?.get(name)
    }
}

impl Tree for MemTree {
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FsError> {
        let Some(children) = self.dirs.get(dir) else {
            return Err(match self.node(dir) {
                Some(_) => {
                    FsError::new(ErrorCode::NotDirectory, format!("{dir} is not a directory"))
                }
                None => FsError::not_found(dir),
            });
        };
        Ok(children
            .iter()
            .map(|(name, node)| {
                let (kind, size, modified) = match node {
                    Node::File(bytes, at) => (DirEntryKind::File, bytes.len() as u64, *at),
                    Node::Dir => (DirEntryKind::Directory, 0, None),
                    Node::Link => (DirEntryKind::Symlink, 0, None),
                };
                DirEntry {
                    name: name.clone(),
                    kind,
                    size,
                    modified,
                }
            })
            .collect())
    }

    fn kind(&self, path: &str) -> Result<Option<DirEntryKind>, FsError> {
        if self.dirs.contains_key(path) {
            return Ok(Some(DirEntryKind::Directory));
        }
        Ok(self.node(path).map(|node| match node {
            Node::File(..) => DirEntryKind::File,
            Node::Dir => DirEntryKind::Directory,
            Node::Link => DirEntryKind::Symlink,
        }))
    }

    fn open(&self, path: &str) -> Result<Box<dyn Read + '_>, FsError> {
        match self.node(path) {
            Some(Node::File(bytes, _)) => Ok(Box::new(&bytes[..])),
            Some(_) => Err(FsError::new(
                ErrorCode::NotRegularFile,
                format!("{} is not a regular file", join("", path)),
            )),
            None => Err(FsError::not_found(path)),
        }
    }
}
