//! [`dsh_fs_core::store::ByteStore`] over the imported `dsh:fs/store`
//! ([`dsh_fs_core::wit_byte_store!`]): each trait method is one WIT call,
//! the `reader` and `replacement` resources are the store's objects and
//! replacements.

use crate::component::dsh::fs::store as wit;

dsh_fs_core::wit_byte_store!(wit);
