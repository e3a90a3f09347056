//! Directory listing over an object store: one list-with-delimiter under the
//! directory's key, where each common prefix is a directory.

use super::{BucketStore, StoreError, map_store};
use dsh_fs_core::listing::{Collector, Entries, not_a_directory};
use dsh_fs_core::{DirEntryKind, FsError};
use object_store::ObjectStoreExt;
use object_store::path::Path as ObjectPath;

impl BucketStore {
    /// The children of `key`: objects as files, prefixes as directories. An
    /// empty listing is a missing key unless it is the root; an object at
    /// `key` with nothing under it is `not-directory`.
    pub(super) async fn list_prefix(&self, key: &str, shown: &str) -> Result<Entries, FsError> {
        let loc = self.location(key, shown)?;
        let under = (!loc.as_ref().is_empty()).then_some(&loc);
        let listed = self
            .store_ref()
            .list_with_delimiter(under)
            .await
            .map_err(|e| map_store(e, shown))?;
        if !key.is_empty() && listed.objects.is_empty() && listed.common_prefixes.is_empty() {
            return Err(self.why_not_listed(key, &loc, shown).await);
        }
        let mut found = Collector::new(shown);
        for prefix in &listed.common_prefixes {
            let name = prefix.filename().map(str::to_owned);
            found.push(name, DirEntryKind::Directory, 0, None)?;
        }
        for meta in listed.objects.iter().filter(|m| m.location != loc) {
            let name = meta.location.filename().map(str::to_owned);
            let modified = meta
                .last_modified
                .timestamp_nanos_opt()
                .and_then(|n| u64::try_from(n).ok());
            found.push(name, DirEntryKind::File, meta.size, modified)?;
        }
        Ok(found.finish())
    }

    /// Why nothing lies under `key`: it is an object, a parent is, or it is absent.
    async fn why_not_listed(&self, key: &str, loc: &ObjectPath, shown: &str) -> FsError {
        match self.store_ref().head(loc).await {
            Ok(_) => not_a_directory(shown),
            Err(StoreError::NotFound { .. }) => match self.check_parents(key, shown).await {
                Ok(()) => FsError::not_found(shown),
                Err(e) => e,
            },
            Err(e) => map_store(e, shown),
        }
    }
}
