//! One directory's entries in byte order of their names, as every backend
//! lists them: a store gathers a directory once, in any order ([`Collector`],
//! bounded by [`MAX_ENTRIES`]), and the text layer sorts what it lists
//! ([`sorted`]), both as [`Entries`] handed out in pages.

use crate::{DirEntry, DirEntryKind, ErrorCode, FsError};

/// What a file type is, links not followed: from the three questions every
/// filesystem API answers (`std::fs`, cap-std, `wasi:filesystem`).
pub fn kind(symlink: bool, dir: bool, file: bool) -> DirEntryKind {
    if symlink {
        DirEntryKind::Symlink
    } else if dir {
        DirEntryKind::Directory
    } else if file {
        DirEntryKind::File
    } else {
        DirEntryKind::Other
    }
}

/// What `meta` (from `symlink_metadata`) describes, links not followed.
pub fn kind_of(meta: &std::fs::Metadata) -> DirEntryKind {
    let t = meta.file_type();
    kind(t.is_symlink(), t.is_dir(), t.is_file())
}

/// `meta`'s modification time in nanoseconds since the Unix epoch, when
/// the filesystem has one.
pub fn modified_ns(meta: &std::fs::Metadata) -> Option<u64> {
    let at = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    u64::try_from(at.as_nanos()).ok()
}

/// Most entries one directory may have to be listed; more is `too-large`.
pub const MAX_ENTRIES: u64 = 1_000_000;

/// Most entries one page carries, whatever the caller asks for.
pub const MAX_PAGE: u32 = 4096;

/// Gathers the entries of one directory, in any order, counting the names
/// that are not UTF-8 and refusing a directory of more than [`MAX_ENTRIES`].
#[derive(Debug)]
pub struct Collector {
    shown: String,
    entries: Vec<DirEntry>,
    skipped: u64,
}

impl Collector {
    /// An empty collection for the directory shown to the model as `shown`.
    pub fn new(shown: &str) -> Self {
        Collector {
            shown: shown.to_owned(),
            entries: Vec::new(),
            skipped: 0,
        }
    }

    /// Adds one entry; `name` is `None` when the backend's name is not UTF-8
    /// (it is skipped and counted). `.`, `..` and empty names are ignored.
    /// `too-large` once the directory has more than [`MAX_ENTRIES`] entries.
    pub fn push(
        &mut self,
        name: Option<String>,
        kind: DirEntryKind,
        size: u64,
        modified: Option<u64>,
    ) -> Result<(), FsError> {
        if self.entries.len() as u64 + self.skipped >= MAX_ENTRIES {
            return Err(too_many(&self.shown));
        }
        match name {
            None => self.skipped += 1,
            Some(name) if matches!(name.as_str(), "" | "." | "..") => {}
            Some(name) => self.entries.push(DirEntry {
                name,
                size: if kind == DirEntryKind::File { size } else { 0 },
                kind,
                modified,
            }),
        }
        Ok(())
    }

    /// The entries as gathered, in the order they came.
    pub fn finish(self) -> Entries {
        Entries {
            entries: self.entries.into_iter(),
            skipped: self.skipped,
        }
    }
}

/// Every entry of a store's `listing` of the directory `shown`, sorted by
/// the bytes of their names: the one place entries are put in order. `.`,
/// `..` and empty names are dropped, sizes of anything but files are 0, and
/// a name seen twice (an object-store key that is both an object and a
/// prefix) is listed once, as the directory. `too-large` past
/// [`MAX_ENTRIES`] entries.
pub fn sorted(
    listing: &mut (impl crate::store::Listing + ?Sized),
    shown: &str,
) -> Result<Entries, FsError> {
    let mut found = Collector::new(shown);
    loop {
        let page = listing.next_entries(MAX_PAGE)?;
        if page.is_empty() {
            break;
        }
        for e in page {
            found.push(Some(e.name), e.kind, e.size, e.modified)?;
        }
    }
    found.skipped += listing.skipped();
    if found.entries.len() as u64 + found.skipped > MAX_ENTRIES {
        return Err(too_many(shown));
    }
    let mut entries = found.entries;
    entries.sort_by(|a, b| {
        a.name.cmp(&b.name).then_with(|| {
            (b.kind == DirEntryKind::Directory).cmp(&(a.kind == DirEntryKind::Directory))
        })
    });
    entries.dedup_by(|later, first| later.name == first.name);
    Ok(Entries {
        entries: entries.into_iter(),
        skipped: found.skipped,
    })
}

/// One directory's entries handed out page by page: in the order a store
/// gathered them ([`Collector::finish`]), or in byte order of their names
/// once the text layer sorted them ([`sorted`]).
#[derive(Debug)]
pub struct Entries {
    entries: std::vec::IntoIter<DirEntry>,
    skipped: u64,
}

impl Entries {
    /// The next at most `max` entries (at least one while any remain, at most
    /// [`MAX_PAGE`]); empty at the end.
    pub fn next_entries(&mut self, max: u32) -> Vec<DirEntry> {
        let n = max.clamp(1, MAX_PAGE) as usize;
        self.entries.by_ref().take(n).collect()
    }

    /// How many entries were skipped because their names are not UTF-8.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// How many entries remain to be handed out.
    pub fn remaining(&self) -> usize {
        self.entries.len()
    }
}

#[cold]
fn too_many(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::TooLarge,
        format!("{shown} has more than {MAX_ENTRIES} entries, too many to list"),
    )
}

/// `not-directory` for a listing of something that is not a directory.
#[cold]
pub fn not_a_directory(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::NotDirectory,
        format!("{shown} is not a directory"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_bytes_pages_and_counts_skipped() {
        let mut c = Collector::new("d");
        for name in ["b", "B", "a.rs", "é", "a"] {
            c.push(Some(name.into()), DirEntryKind::File, 3, None)
                .unwrap();
        }
        c.push(None, DirEntryKind::File, 1, None).unwrap();
        c.push(Some("..".into()), DirEntryKind::Directory, 0, None)
            .unwrap();
        c.push(Some("sub".into()), DirEntryKind::Directory, 9, None)
            .unwrap();
        let mut l = sorted(&mut c.finish(), "d").unwrap();
        assert_eq!(l.skipped(), 1);
        let mut names = Vec::new();
        loop {
            let page = l.next_entries(2);
            if page.is_empty() {
                break;
            }
            assert!(page.len() <= 2);
            names.extend(page.into_iter().map(|e| (e.name, e.size)));
        }
        let want = [
            ("B", 3),
            ("a", 3),
            ("a.rs", 3),
            ("b", 3),
            ("sub", 0),
            ("é", 3),
        ];
        let want: Vec<_> = want.iter().map(|(n, s)| (n.to_string(), *s)).collect();
        assert_eq!(names, want);
    }

    #[test]
    fn a_prefix_and_an_object_of_one_name_list_once_as_a_directory() {
        let mut c = Collector::new("d");
        c.push(Some("x".into()), DirEntryKind::File, 1, None)
            .unwrap();
        c.push(Some("x".into()), DirEntryKind::Directory, 0, None)
            .unwrap();
        let page = sorted(&mut c.finish(), "d").unwrap().next_entries(0);
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].kind, DirEntryKind::Directory);
    }
}
