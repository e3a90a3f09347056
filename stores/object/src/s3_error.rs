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

/// The fields of S3's XML answers that this crate reads: an error's
/// (`<Error><Code>…</Code><Message>…</Message>…`) and the `ETag` of a
/// completed upload or a copied part. They are the root element's children,
/// in any order, with entities and character references resolved; a field
/// the answer lacks is `None`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Answer {
    pub(super) code: Option<String>,
    pub(super) message: Option<String>,
    pub(super) bucket_name: Option<String>,
    #[serde(rename = "ETag")]
    pub(super) e_tag: Option<String>,
}

impl Answer {
    /// `body` read as XML, or `None` when it is not. Leading whitespace is
    /// skipped: S3 sends spaces to keep a long `CompleteMultipartUpload`
    /// alive before its answer.
    pub(super) fn parse(body: &str) -> Option<Answer> {
        quick_xml::de::from_str(body.trim_start()).ok()
    }
}

/// The text of a store error without raw XML.
pub(super) fn readable(e: &StoreError) -> String {
    let text = e.to_string();
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text;
    };
    let answer = Answer::parse(&text[start..]).unwrap_or_default();
    // What precedes the body: the request and the HTTP status.
    let request = text[..start].trim_end().trim_end_matches(':');
    match (answer.code.as_deref(), answer.message.as_deref()) {
        (Some("NoSuchBucket"), _) => format!(
            "the bucket `{}` does not exist; create it, or name an existing bucket in the store URL",
            answer.bucket_name.as_deref().unwrap_or("?")
        ),
        (Some(code), message) => {
            format!("{code}: {} ({request})", message.unwrap_or("no message"))
        }
        (None, _) => format!("{request} (the store's answer was not understood)"),
    }
}

#[cfg(test)]
mod tests {
    use super::{Answer, readable};

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

    #[test]
    fn an_empty_body_is_kept() {
        let e = generic("Error performing PUT http://s3/b/k - 500 Internal Server Error: ");
        assert_eq!(readable(&e), e.to_string());
    }

    #[test]
    fn entities_are_resolved_and_fields_taken_in_any_order() {
        let e = generic(
            "Error performing GET http://s3/b/k - 400 Bad Request: <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <Error><RequestId>4442587FB7D0A2F9</RequestId>\
             <Message>Tom &amp; Jerry&apos;s &lt;key&gt; &#233;</Message>\
             <Code>InvalidArgument</Code></Error>",
        );
        assert_eq!(
            readable(&e),
            "InvalidArgument: Tom & Jerry's <key> \u{e9} (Generic S3 error: Error performing GET http://s3/b/k - 400 Bad Request)"
        );
    }

    #[test]
    fn a_missing_message_is_said() {
        let e = generic(
            "Error performing PUT http://s3/b/k - 503: <Error><Code>SlowDown</Code></Error>",
        );
        assert_eq!(
            readable(&e),
            "SlowDown: no message (Generic S3 error: Error performing PUT http://s3/b/k - 503)"
        );
    }

    #[test]
    fn a_missing_bucket_is_named() {
        let e = generic(
            "Error performing PUT http://s3/b/k - 404 Not Found: <?xml version=\"1.0\"?>\
             <Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message>\
             <BucketName>b</BucketName></Error>",
        );
        assert_eq!(
            readable(&e),
            "the bucket `b` does not exist; create it, or name an existing bucket in the store URL"
        );
    }

    #[test]
    fn a_body_that_is_not_xml_is_not_understood() {
        for body in [
            "<Error>oops",
            "<?xml version=\"1.0\"?>",
            "<?xml version=\"1.0\"?><Error><Code>",
        ] {
            let e = generic(&format!("Error performing PUT http://s3/b/k - 500: {body}"));
            assert_eq!(
                readable(&e),
                "Generic S3 error: Error performing PUT http://s3/b/k - 500 (the store's answer was not understood)",
                "{body}"
            );
        }
    }

    #[test]
    fn an_e_tag_is_read_unescaped_after_keep_alive_spaces() {
        let body = "   \n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
             <Location>http://s3/b/k</Location><Bucket>b</Bucket><Key>k</Key>\
             <ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag>\
             </CompleteMultipartUploadResult>";
        let answer = Answer::parse(body).expect("parsed");
        assert_eq!(
            answer.e_tag.as_deref(),
            Some("\"3858f62230ac3c915f300c664312c11f-9\"")
        );
        assert_eq!(answer.code, None);
        // MinIO writes the quotes as character references.
        let answer = Answer::parse("<CopyPartResult><ETag>&#34;abc&#34;</ETag></CopyPartResult>");
        assert_eq!(answer.and_then(|a| a.e_tag).as_deref(), Some("\"abc\""));
    }

    #[test]
    fn an_error_answered_with_200_has_its_code() {
        let body = "<?xml version=\"1.0\"?>\n\n<Error><Code>InternalError</Code>\
                    <Message>We encountered an internal error. Please try again.</Message></Error>";
        let answer = Answer::parse(body).expect("parsed");
        assert_eq!(answer.code.as_deref(), Some("InternalError"));
        assert_eq!(answer.e_tag, None);
    }

    #[test]
    fn an_empty_or_plain_body_is_no_answer() {
        assert!(Answer::parse("").is_none());
        assert!(Answer::parse("Service Unavailable").is_none());
    }
}
