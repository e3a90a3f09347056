//! Store errors as the seam's codes, in one readable line: S3 answers
//! failures with an XML body, which `object_store` passes on verbatim; the
//! model and the user get its `Code` and `Message` instead, and a sentence
//! with the fix for a bucket that does not exist.

use super::StoreError;
use dsh_fs_core::{ErrorCode, FsError};

/// Maps a store error to the seam's codes.
pub(super) fn map_store(e: StoreError, shown: &str) -> FsError {
    match e {
        StoreError::NotFound { .. } => FsError::not_found(shown),
        StoreError::Precondition { .. } => FsError::stale(shown),
        StoreError::AlreadyExists { .. } => FsError::new(
            ErrorCode::NotObserved,
            format!("{shown} already exists and has not been read in this session"),
        ),
        StoreError::PermissionDenied { .. } => FsError::new(
            ErrorCode::PermissionDenied,
            format!("the store denied access to {shown}: {}", readable(&e)),
        ),
        StoreError::Unauthenticated { .. } => FsError::new(
            ErrorCode::PermissionDenied,
            format!(
                "the store refused the credentials for {shown}: {}",
                readable(&e)
            ),
        ),
        StoreError::InvalidPath { .. } => FsError::new(
            ErrorCode::InvalidInput,
            format!("{shown} is not a valid object key: {}", readable(&e)),
        ),
        e => FsError::new(ErrorCode::IoError, format!("{shown}: {}", readable(&e))),
    }
}

/// [`map_store`] for a write, where a store without conditional puts must
/// say so rather than pass for an I/O hiccup.
pub(super) fn map_put(e: StoreError, shown: &str) -> FsError {
    match e {
        StoreError::NotImplemented { .. } | StoreError::NotSupported { .. } => FsError::new(
            ErrorCode::IoError,
            format!(
                "the store cannot write {shown} conditionally, so it is not written: {}",
                readable(&e)
            ),
        ),
        e => map_store(e, shown),
    }
}

/// The text of a store error without raw XML.
pub(super) fn readable(e: &StoreError) -> String {
    let text = e.to_string();
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text;
    };
    let body = &text[start..];
    let field = |name: &str| {
        let open = format!("<{name}>");
        let from = body.find(&open)? + open.len();
        let len = body[from..].find(&format!("</{name}>"))?;
        Some(&body[from..from + len])
    };
    // What precedes the body: the request and the HTTP status.
    let request = text[..start].trim_end().trim_end_matches(':');
    match (field("Code"), field("Message")) {
        (Some("NoSuchBucket"), _) => format!(
            "the bucket `{}` does not exist; create it, or name an existing bucket in the store URL",
            field("BucketName").unwrap_or("?")
        ),
        (Some(code), message) => {
            format!("{code}: {} ({request})", message.unwrap_or("no message"))
        }
        (None, _) => format!("{request} (the store's answer was not understood)"),
    }
}

#[cfg(test)]
mod tests {
    use super::readable;

    fn generic(text: &str) -> ::object_store::Error {
        ::object_store::Error::Generic {
            store: "S3",
            source: text.into(),
        }
    }

    #[test]
    fn an_xml_body_becomes_its_code_and_message() {
        let e = generic(
            "Error performing PUT http://s3/b/k - 403 Forbidden: <?xml version=\"1.0\"?>\n\
             <Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
        );
        assert_eq!(
            readable(&e),
            "AccessDenied: Access Denied (Generic S3 error: Error performing PUT http://s3/b/k - 403 Forbidden)"
        );
    }

    #[test]
    fn text_without_xml_is_kept() {
        let e = generic("connection refused");
        assert_eq!(readable(&e), e.to_string());
    }
}
