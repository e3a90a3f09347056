//! The mapping between the core types and the Rust types a WIT binding
//! generates for `dsh:fs/types` and `dsh:fs/store`, written once.
//!
//! Every binding (`wasmtime::component::bindgen!` in the host, `wit_bindgen`
//! in the components) gets its own copy of the WIT types. Instead of each
//! spelling out fifteen error codes and a dozen records, a binding names its
//! module and gets `From` both ways:
//!
//! ```ignore
//! use bindings::dsh::fs::types as wit;
//! dsh_fs_core::wit_types!(wit);
//! ```
//!
//! The macros match variants and fields by name, so a WIT change that the
//! core types do not follow fails to compile in every binding at once.

/// `From` both ways between the core types and the binding of
/// `dsh:fs/types` in module `$wit` (an identifier in scope: `use … as wit`).
#[macro_export]
macro_rules! wit_types {
    ($wit:ident) => {
        $crate::__wit_enum!($wit ErrorCode else IoError {
            NotFound, NotText, NotRegularFile, NotDirectory, StaleVersion, NotObserved,
            AmbiguousEdit, EditNotFound, SandboxDenied, PermissionDenied, TooLarge, IoError,
            Aborted, InvalidInput, Busy,
        });
        $crate::__wit_enum!($wit EntryKind { File, Directory, Other });
        $crate::__wit_enum!($wit DirEntryKind { File, Directory, Symlink, Other });
        $crate::__wit_enum!($wit WriteOperation { Created, Updated });
        $crate::__wit_record!($wit FsError { code, message });
        $crate::__wit_record!($wit FsInfo { version, kind, size });
        $crate::__wit_record!($wit TextContent { text, version });
        $crate::__wit_record!($wit Skipped { bytes, lines, mid_line });
        $crate::__wit_record!($wit WriteOutcome { operation, version });
        $crate::__wit_record!($wit EditRequest { old_string, new_string, replace_all });
        $crate::__wit_record!($wit EditExcerpt { first_line, before, after });

        impl ::core::convert::From<$wit::EditOutcome> for $crate::EditOutcome {
            fn from(o: $wit::EditOutcome) -> Self {
                $crate::EditOutcome {
                    replacements: o.replacements,
                    version: o.version,
                    first_line: o.first_line,
                    excerpt: o.excerpt.map(Into::into),
                }
            }
        }

        impl ::core::convert::From<$crate::EditOutcome> for $wit::EditOutcome {
            fn from(o: $crate::EditOutcome) -> Self {
                $wit::EditOutcome {
                    replacements: o.replacements,
                    version: o.version,
                    first_line: o.first_line,
                    excerpt: o.excerpt.map(Into::into),
                }
            }
        }

        impl ::core::convert::From<$wit::EditsError> for $crate::EditsError {
            fn from(e: $wit::EditsError) -> Self {
                $crate::EditsError { edit: e.edit, error: e.error.into() }
            }
        }

        impl ::core::convert::From<$crate::EditsError> for $wit::EditsError {
            fn from(e: $crate::EditsError) -> Self {
                $wit::EditsError { edit: e.edit, error: e.error.into() }
            }
        }
        $crate::__wit_record!($wit DirEntry { name, kind, size, modified });

        impl ::core::convert::From<$wit::PathText> for $crate::PathText {
            fn from(p: $wit::PathText) -> Self {
                $crate::PathText {
                    display_path: p.display_path,
                    key: p.key,
                    content: p.content.map(Into::into).map_err(Into::into),
                }
            }
        }

        impl ::core::convert::From<$crate::PathText> for $wit::PathText {
            fn from(p: $crate::PathText) -> Self {
                $wit::PathText {
                    display_path: p.display_path,
                    key: p.key,
                    content: p.content.map(Into::into).map_err(Into::into),
                }
            }
        }

        impl ::core::convert::From<$wit::WriteIntent> for $crate::WriteIntent {
            fn from(i: $wit::WriteIntent) -> Self {
                match i {
                    $wit::WriteIntent::CreateIfAbsent => $crate::WriteIntent::CreateIfAbsent,
                    $wit::WriteIntent::ReplaceIfVersion(v) => $crate::WriteIntent::ReplaceIfVersion(v),
                }
            }
        }

        impl ::core::convert::From<$crate::WriteIntent> for $wit::WriteIntent {
            fn from(i: $crate::WriteIntent) -> Self {
                match i {
                    $crate::WriteIntent::CreateIfAbsent => $wit::WriteIntent::CreateIfAbsent,
                    $crate::WriteIntent::ReplaceIfVersion(v) => $wit::WriteIntent::ReplaceIfVersion(v),
                }
            }
        }

        impl ::core::convert::From<$wit::SearchQuery> for $crate::SearchQuery {
            fn from(q: $wit::SearchQuery) -> Self {
                match q {
                    $wit::SearchQuery::Glob(g) => $crate::SearchQuery::Glob(g),
                    $wit::SearchQuery::Grep(g) => $crate::SearchQuery::Grep {
                        pattern: g.pattern,
                        include: g.include,
                    },
                }
            }
        }

        impl ::core::convert::From<$crate::SearchQuery> for $wit::SearchQuery {
            fn from(q: $crate::SearchQuery) -> Self {
                match q {
                    $crate::SearchQuery::Glob(g) => $wit::SearchQuery::Glob(g),
                    $crate::SearchQuery::Grep { pattern, include } => {
                        $wit::SearchQuery::Grep($wit::GrepQuery { pattern, include })
                    }
                }
            }
        }
    };
}

/// `From` both ways between [`crate::store::ObjectMeta`] and the binding of
/// `dsh:fs/store` in module `$store`; its `entry-kind` comes from the
/// binding's `dsh:fs/types`, which must have [`wit_types!`] too.
#[macro_export]
macro_rules! wit_store {
    ($store:ident) => {
        impl ::core::convert::From<$store::ObjectMeta> for $crate::store::ObjectMeta {
            fn from(m: $store::ObjectMeta) -> Self {
                $crate::store::ObjectMeta {
                    kind: m.kind.into(),
                    size: m.size,
                    token: m.token,
                }
            }
        }

        impl ::core::convert::From<$crate::store::ObjectMeta> for $store::ObjectMeta {
            fn from(m: $crate::store::ObjectMeta) -> Self {
                $store::ObjectMeta {
                    kind: m.kind.into(),
                    size: m.size,
                    token: m.token,
                }
            }
        }
    };
}

/// Exports `dsh:fs/provider` from one native [`Provider`](crate::Provider),
/// the one way every provider component does it. `$api` is the binding of
/// the exported `provider` interface, `$wit` of the `types` it uses (with
/// [`wit_types!`]), `$component` the type given to `export!`, and
/// `$provider` an expression of type `Result<&'static P, E>`, for a
/// provider `P` of core targets, boxed streams and listings (the text layer
/// over any `Send` store is one) and an error `E` that converts to the
/// binding's `fs-error`, which every call then answers. Defines the
/// exported resources `ProviderStream` and `ProviderListing`.
#[macro_export]
macro_rules! wit_provider {
    ($api:ident, $wit:ident, $component:ident, $provider:expr) => {
        impl $api::Guest for $component {
            type Target = $crate::store::Target;
            type TextStream = ProviderStream;
            type Listing = ProviderListing;

            fn resolve(path: ::std::string::String) -> Result<$api::Target, $wit::FsError> {
                let target = $crate::Provider::resolve($provider?, &path)?;
                Ok($api::Target::new(target))
            }

            fn stat(t: $api::TargetBorrow<'_>) -> Result<Option<$wit::FsInfo>, $wit::FsError> {
                Ok($crate::Provider::stat($provider?, t.get())?.map(Into::into))
            }

            fn read_text(
                t: $api::TargetBorrow<'_>,
                max_bytes: u64,
            ) -> Result<$wit::TextContent, $wit::FsError> {
                Ok($crate::Provider::read_text($provider?, t.get(), max_bytes)?.into())
            }

            fn read_path(
                path: ::std::string::String,
                max_bytes: u64,
            ) -> Result<$wit::PathText, $wit::FsError> {
                Ok($crate::Provider::read_path($provider?, &path, max_bytes)?.into())
            }

            fn stream_text(
                t: $api::TargetBorrow<'_>,
                start: u64,
            ) -> Result<$api::TextStream, $wit::FsError> {
                let stream = $crate::Provider::stream_text($provider?, t.get(), start)?;
                Ok($api::TextStream::new(ProviderStream(
                    ::core::cell::RefCell::new(stream),
                )))
            }

            fn write_text(
                t: $api::TargetBorrow<'_>,
                content: ::std::string::String,
                intent: Option<$wit::WriteIntent>,
            ) -> Result<$wit::WriteOutcome, $wit::FsError> {
                let intent = intent.map(Into::into);
                Ok($crate::Provider::write_text($provider?, t.get(), &content, intent)?.into())
            }

            fn edit_text(
                t: $api::TargetBorrow<'_>,
                edit: $wit::EditRequest,
                expected: Option<$wit::Version>,
            ) -> Result<$wit::EditOutcome, $wit::FsError> {
                let edit = edit.into();
                let target = t.get();
                Ok(
                    $crate::Provider::edit_text($provider?, target, &edit, expected.as_deref())?
                        .into(),
                )
            }

            fn edit_texts(
                t: $api::TargetBorrow<'_>,
                edits: Vec<$wit::EditRequest>,
                expected: Option<$wit::Version>,
            ) -> Result<$wit::EditOutcome, $wit::EditsError> {
                let provider = $provider.map_err(|e| $wit::EditsError {
                    edit: None,
                    error: e.into(),
                })?;
                let edits: Vec<$crate::EditRequest> = edits.into_iter().map(Into::into).collect();
                $crate::Provider::edit_texts(provider, t.get(), &edits, expected.as_deref())
                    .map(Into::into)
                    .map_err(Into::into)
            }

            fn remove_file(
                t: $api::TargetBorrow<'_>,
                expected: $wit::Version,
            ) -> Result<(), $wit::FsError> {
                Ok($crate::Provider::remove_file(
                    $provider?,
                    t.get(),
                    &expected,
                )?)
            }

            fn list_dir(t: $api::TargetBorrow<'_>) -> Result<$api::Listing, $wit::FsError> {
                let listing = $crate::Provider::list_dir($provider?, t.get())?;
                Ok($api::Listing::new(ProviderListing(
                    ::core::cell::RefCell::new(listing),
                )))
            }

            fn search(
                t: $api::TargetBorrow<'_>,
                query: $wit::SearchQuery,
            ) -> Result<Option<::std::string::String>, $wit::FsError> {
                Ok($crate::Provider::search(
                    $provider?,
                    t.get(),
                    &query.into(),
                )?)
            }
        }

        impl $api::GuestTarget for $crate::store::Target {
            fn display_path(&self) -> ::std::string::String {
                $crate::store::Target::display_path(self).to_owned()
            }

            fn key(&self) -> ::std::string::String {
                $crate::store::Target::key(self).to_owned()
            }
        }

        /// The exported `text-stream` resource.
        pub struct ProviderStream(::core::cell::RefCell<$crate::provider::BoxStream>);

        impl $api::GuestTextStream for ProviderStream {
            fn next(&self, max_bytes: u32) -> Result<Option<::std::string::String>, $wit::FsError> {
                Ok($crate::provider::TextStream::next_chunk(
                    &mut **self.0.borrow_mut(),
                    max_bytes,
                )?)
            }

            fn skip(
                &self,
                max_bytes: u32,
                max_lines: u64,
            ) -> Result<Option<$wit::Skipped>, $wit::FsError> {
                Ok($crate::provider::TextStream::skip(
                    &mut **self.0.borrow_mut(),
                    max_bytes,
                    max_lines,
                )?
                .map(Into::into))
            }

            fn version(&self) -> Option<$wit::Version> {
                $crate::provider::TextStream::version(&**self.0.borrow())
            }
        }

        /// The exported `listing` resource.
        pub struct ProviderListing(::core::cell::RefCell<$crate::provider::BoxListing>);

        impl $api::GuestListing for ProviderListing {
            fn next(&self, max: u32) -> Result<Vec<$wit::DirEntry>, $wit::FsError> {
                let page =
                    $crate::provider::Listing::next_entries(&mut **self.0.borrow_mut(), max)?;
                Ok(page.into_iter().map(Into::into).collect())
            }

            fn skipped(&self) -> u64 {
                $crate::provider::Listing::skipped(&**self.0.borrow())
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __wit_enum {
    ($wit:ident $name:ident $(else $fallback:ident)? { $($v:ident),* $(,)? }) => {
        impl ::core::convert::From<$wit::$name> for $crate::$name {
            fn from(v: $wit::$name) -> Self {
                match v {
                    $($wit::$name::$v => $crate::$name::$v,)*
                }
            }
        }

        impl ::core::convert::From<$crate::$name> for $wit::$name {
            fn from(v: $crate::$name) -> Self {
                // A `#[non_exhaustive]` core enum needs a catch-all outside core.
                #[allow(unreachable_patterns)]
                match v {
                    $($crate::$name::$v => $wit::$name::$v,)*
                    $(_ => $wit::$name::$fallback,)?
                }
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __wit_record {
    ($wit:ident $name:ident { $($f:ident),* $(,)? }) => {
        impl ::core::convert::From<$wit::$name> for $crate::$name {
            #[allow(clippy::useless_conversion)]
            fn from(r: $wit::$name) -> Self {
                $crate::$name { $($f: r.$f.into(),)* }
            }
        }

        impl ::core::convert::From<$crate::$name> for $wit::$name {
            #[allow(clippy::useless_conversion)]
            fn from(r: $crate::$name) -> Self {
                $wit::$name { $($f: r.$f.into(),)* }
            }
        }
    };
}

/// [`ByteStore`](crate::store::ByteStore) over the binding of an imported
/// `dsh:fs/store` in module `$store` (whose `types` have [`wit_types!`] and
/// which has [`wit_store!`]): defines `WitStore`, each trait method one WIT
/// call, with `WitObject` over the `reader` resource, `WitReplace` over the
/// `replacement` and `WitListing` over the `listing`. A directory's entries
/// are passed on in the store's order: the text layer sorts them, as it
/// sorts every store's. The text layer component and the tools built with
/// the text layer inside (feature `text`) both serve their store this way.
#[macro_export]
macro_rules! wit_byte_store {
    ($store:ident) => {
        /// The store the host plugged in; its roots asked once per instance.
        pub struct WitStore {
            roots: ::std::vec::Vec<::std::path::PathBuf>,
            max_object_bytes: u64,
        }

        impl WitStore {
            /// The imported store.
            pub fn new() -> Self {
                WitStore {
                    roots: $store::roots()
                        .into_iter()
                        .map(::std::path::PathBuf::from)
                        .collect(),
                    max_object_bytes: $store::max_object_bytes(),
                }
            }
        }

        impl ::std::fmt::Debug for WitStore {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct("WitStore")
                    .field("roots", &self.roots)
                    .field("max_object_bytes", &self.max_object_bytes)
                    .finish()
            }
        }

        fn place(target: &$crate::store::Target) -> $store::Place {
            $store::Place {
                key: target.key().to_owned(),
                shown: target.display_path().to_owned(),
            }
        }

        fn guard(guard: $crate::store::Guard<'_>) -> $store::Guard {
            match guard {
                $crate::store::Guard::Absent => $store::Guard::Absent,
                $crate::store::Guard::Unchanged(token) => {
                    $store::Guard::Unchanged(token.to_owned())
                }
                $crate::store::Guard::None => $store::Guard::None,
            }
        }

        impl $crate::store::ByteStore for WitStore {
            type Object = WitObject;
            type Replace<'s> = WitReplace;
            type Listing = WitListing;

            fn roots(&self) -> &[::std::path::PathBuf] {
                &self.roots
            }

            fn max_object_bytes(&self) -> u64 {
                self.max_object_bytes
            }

            fn identity(&self, rel: &str, shown: &str) -> Result<String, $crate::FsError> {
                Ok($store::identity(rel, shown)?)
            }

            fn stat(
                &self,
                target: &$crate::store::Target,
            ) -> Result<Option<$crate::store::ObjectMeta>, $crate::FsError> {
                Ok($store::stat(&place(target))?.map(Into::into))
            }

            fn open(&self, target: &$crate::store::Target) -> Result<WitObject, $crate::FsError> {
                Ok(WitObject::new($store::open(&place(target))?))
            }

            fn list_dir(
                &self,
                target: &$crate::store::Target,
            ) -> Result<WitListing, $crate::FsError> {
                Ok(WitListing($store::list_dir(&place(target))?))
            }

            fn replace(
                &self,
                target: &$crate::store::Target,
                create_parents: bool,
            ) -> Result<(WitReplace, Option<WitObject>), $crate::FsError> {
                let (replacement, current) = $store::replace(&place(target), create_parents)?;
                Ok((WitReplace(replacement), current.map(WitObject::new)))
            }
        }

        /// A directory of the store as its `listing` gives it, in any order.
        pub struct WitListing($store::Listing);

        impl $crate::store::Listing for WitListing {
            fn next_entries(
                &mut self,
                max: u32,
            ) -> Result<::std::vec::Vec<$crate::DirEntry>, $crate::FsError> {
                Ok(self.0.next(max)?.into_iter().map(Into::into).collect())
            }

            fn skipped(&self) -> u64 {
                self.0.skipped()
            }
        }

        /// An open file of the store: its `reader` and the metadata it had when opened.
        pub struct WitObject {
            reader: $store::Reader,
            meta: $crate::store::ObjectMeta,
        }

        impl WitObject {
            fn new(reader: $store::Reader) -> Self {
                let meta = reader.meta().into();
                WitObject { reader, meta }
            }
        }

        impl ::std::fmt::Debug for WitObject {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct("WitObject")
                    .field("meta", &self.meta)
                    .finish()
            }
        }

        impl $crate::store::Object for WitObject {
            fn meta(&self) -> &$crate::store::ObjectMeta {
                &self.meta
            }

            fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, $crate::FsError> {
                let want = buf.len().min(u32::MAX as usize);
                let bytes = self.reader.read(offset, want as u32)?;
                // A store that hands out more than asked is cut to the request.
                let n = bytes.len().min(want);
                buf[..n].copy_from_slice(&bytes[..n]);
                Ok(n)
            }

            /// The bytes the store handed over become the buffer when it
            /// holds nothing yet: the default would zero the buffer, then
            /// copy them in (a fifth of a large first read in Node).
            fn read_append(
                &mut self,
                offset: u64,
                buf: &mut ::std::vec::Vec<u8>,
            ) -> Result<usize, $crate::FsError> {
                let want = (buf.capacity() - buf.len()).min(u32::MAX as usize);
                let mut bytes = self.reader.read(offset, want as u32)?;
                bytes.truncate(want);
                let n = bytes.len();
                if buf.is_empty() {
                    *buf = bytes;
                } else {
                    buf.extend_from_slice(&bytes);
                }
                Ok(n)
            }

            fn token_now(&mut self) -> Result<String, $crate::FsError> {
                Ok(self.reader.token_now()?)
            }
        }

        /// A replacement in progress in the store.
        pub struct WitReplace($store::Replacement);

        impl ::std::fmt::Debug for WitReplace {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str("WitReplace")
            }
        }

        impl $crate::store::Replace for WitReplace {
            type Object = WitObject;

            fn check_writable(&mut self) -> Result<(), $crate::FsError> {
                Ok(self.0.check_writable()?)
            }

            fn write(&mut self, bytes: &[u8]) -> Result<(), $crate::FsError> {
                Ok(self.0.write(bytes)?)
            }

            /// The store copies from the file its `replace` opened, which is
            /// the only object the text layer ever copies from.
            fn copy(
                &mut self,
                _from: &mut WitObject,
                offset: u64,
                len: u64,
            ) -> Result<(), $crate::FsError> {
                Ok(self.0.copy(offset, len)?)
            }

            fn commit(self, g: $crate::store::Guard<'_>) -> Result<String, $crate::FsError> {
                Ok($store::Replacement::commit(self.0, &guard(g))?)
            }

            fn remove(
                self,
                g: $crate::store::Guard<'_>,
                _shown: &str,
            ) -> Result<(), $crate::FsError> {
                Ok($store::Replacement::remove(self.0, &guard(g))?)
            }
        }
    };
}
