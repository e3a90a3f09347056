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
        $crate::__wit_record!($wit EditOutcome { replacements, version, first_line });
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
