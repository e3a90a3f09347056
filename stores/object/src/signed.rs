//! Requests to S3 that `object_store` has no call for (a conditional
//! `CompleteMultipartUpload`, `UploadPartCopy` of a range), signed with its
//! S3 client's credentials and sent through its HTTP client.

use super::StoreError;
use super::replace::Upload;
use super::s3_error::Answer;
use ::object_store::aws::AmazonS3;
use ::object_store::client::{ClientOptions, HttpClient, HttpConnector, ReqwestConnector};
use ::object_store::path::Path as ObjectPath;
use ::object_store::signer::{Method, SignedUrlOptions, Signer};
use ::object_store::{GetOptions, ObjectStore, PutResult};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::time::Duration;

/// Sends one request that `object_store` has no call for, signed by its S3
/// client: the status, the body and the object version the answer names.
pub(super) async fn signed(
    s3: &AmazonS3,
    method: Method,
    loc: &ObjectPath,
    query: &[(&str, &str)],
    headers: &[(&str, String)],
    body: String,
) -> Result<(u16, String, Option<String>), StoreError> {
    let failed = |source: String| StoreError::Generic {
        store: "S3",
        source: source.into(),
    };
    let mut options = SignedUrlOptions::default().with_query(query.iter().copied());
    let mut request = http::Request::builder().method(method.clone());
    for (name, value) in headers {
        let name =
            http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| failed(e.to_string()))?;
        let value = http::HeaderValue::from_str(value).map_err(|e| failed(e.to_string()))?;
        options = options.with_signed_header(name.clone(), value.clone());
        request = request.header(name, value);
    }
    let url = s3
        .signed_url_opts(method, loc, Duration::from_secs(300), &options)
        .await?;
    let request = request
        .uri(url.as_str())
        .body(body.into())
        .map_err(|e| failed(e.to_string()))?;
    let response = http_client()?
        .execute(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let status = response.status().as_u16();
    let version = response
        .headers()
        .get("x-amz-version-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response
        .into_body()
        .bytes()
        .await
        .map_err(|e| failed(e.to_string()))?;
    Ok((status, String::from_utf8_lossy(&text).into_owned(), version))
}

/// What `x-amz-copy-source` encodes in a key: every byte but S3's
/// unreserved characters (`A-Z a-z 0-9 - _ . ~`) and the `/` between the
/// key's segments. Bytes outside ASCII are always encoded.
const KEY_ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// A key as `x-amz-copy-source` wants it: percent-encoded but for `/`.
pub(super) fn encode_key(key: &str) -> String {
    utf8_percent_encode(key, KEY_ENCODED).to_string()
}

/// How long a signed request may take: S3 may take minutes to complete the
/// upload of a large object (it keeps the connection alive meanwhile).
const SIGNED_TIMEOUT: Duration = Duration::from_secs(600);

/// One HTTP client for the signed requests of this process.
pub(super) fn http_client() -> Result<HttpClient, StoreError> {
    static CLIENT: std::sync::OnceLock<HttpClient> = std::sync::OnceLock::new();
    if let Some(client) = CLIENT.get() {
        return Ok(client.clone());
    }
    super::install_crypto();
    let client = ReqwestConnector::default().connect(
        &ClientOptions::new()
            .with_allow_http(true)
            .with_timeout(SIGNED_TIMEOUT),
    )?;
    Ok(CLIENT.get_or_init(|| client).clone())
}

/// What must hold when a multipart upload completes.
#[derive(Debug)]
pub(super) enum Condition {
    None,
    Absent,
    Match(String),
}

pub(super) enum Completion {
    Refused(u16),
    Failed(StoreError),
}

/// Sends `CompleteMultipartUpload` for `upload` under `condition`.
pub(super) async fn complete(
    upload: &Upload,
    loc: &ObjectPath,
    condition: Condition,
) -> Result<PutResult, Completion> {
    if let Condition::Match(e_tag) = &condition {
        // Servers that ignore `If-Match` on the completion (moto 5.2.5)
        // still refuse a change made before this point.
        let head = GetOptions::default()
            .with_head(true)
            .with_if_match(Some(e_tag.clone()));
        match upload.s3.get_opts(loc, head).await {
            Ok(_) => {}
            Err(StoreError::Precondition { .. }) => return Err(Completion::Refused(412)),
            Err(StoreError::NotFound { .. }) => return Err(Completion::Refused(404)),
            Err(e) => return Err(Completion::Failed(e)),
        }
    }
    let headers = match &condition {
        Condition::Match(e_tag) => vec![("if-match", e_tag.clone())],
        Condition::Absent => vec![("if-none-match", "*".to_owned())],
        Condition::None => vec![],
    };
    let mut body = String::from("<CompleteMultipartUpload>");
    for (i, part) in upload.parts.iter().enumerate() {
        body.push_str(&format!(
            "<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>",
            i + 1,
            quick_xml::escape::escape(&part.content_id)
        ));
    }
    body.push_str("</CompleteMultipartUpload>");
    let query = [("uploadId", upload.id.as_str())];
    let (status, text, version) = signed(&upload.s3, Method::POST, loc, &query, &headers, body)
        .await
        .map_err(Completion::Failed)?;
    let answer = Answer::parse(&text).unwrap_or_default();
    let code = answer.code.as_deref();
    if matches!(status, 404 | 409 | 412)
        || matches!(
            code,
            Some("PreconditionFailed" | "ConditionalRequestConflict")
        )
    {
        // A 404 is `NoSuchKey` only: a vanished upload is an error.
        if status != 404 || code == Some("NoSuchKey") {
            return Err(Completion::Refused(if status == 200 {
                412
            } else {
                status
            }));
        }
    }
    // S3 may answer 200 and put the error in the body.
    match (status, code, answer.e_tag) {
        (200, None, Some(e_tag)) => Ok(PutResult {
            e_tag: Some(e_tag),
            version,
            extensions: Default::default(),
        }),
        _ => Err(Completion::Failed(StoreError::Generic {
            store: "S3",
            source: format!("Error completing the upload of {loc} - {status}: {text}").into(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::encode_key;

    #[test]
    fn a_key_is_encoded_but_for_its_slashes() {
        assert_eq!(
            encode_key("dir/a b+c%d~e_f-g.h/ü€"),
            "dir/a%20b%2Bc%25d~e_f-g.h/%C3%BC%E2%82%AC"
        );
    }

    /// Every ASCII character: kept when unreserved or `/`, else `%XX` in
    /// upper case.
    #[test]
    fn only_unreserved_characters_and_slashes_are_kept() {
        for c in (0u8..0x80).map(char::from) {
            let kept = c.is_ascii_alphanumeric() || "-_.~/".contains(c);
            let want = if kept {
                c.to_string()
            } else {
                format!("%{:02X}", c as u8)
            };
            assert_eq!(encode_key(&c.to_string()), want, "{c:?}");
        }
    }
}
