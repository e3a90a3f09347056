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
