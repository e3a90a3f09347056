//! Names inside root-relative keys. (Normalizing model paths into keys is
//! shared with every other provider: `dsh_fs_core::seam::normalize`.)

/// The last component of a key; `None` for the root.
pub(crate) fn file_name(key: &str) -> Option<&str> {
    key.rsplit('/').next().filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(file_name("a/b.txt"), Some("b.txt"));
        assert_eq!(file_name("b.txt"), Some("b.txt"));
        assert_eq!(file_name(""), None);
    }
}
