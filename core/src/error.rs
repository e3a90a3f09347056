//! The one closed set of failure codes shared by tools, seam and backends.

use std::fmt;

/// Why a filesystem operation failed. Mirrors `dsh:fs/types.error-code`.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The target does not exist.
    NotFound,
    /// The content is not UTF-8 text (invalid UTF-8 or a NUL byte).
    NotText,
    /// The target exists but is not a regular file.
    NotRegularFile,
    /// A parent component of the path is not a directory.
    NotDirectory,
    /// The target changed or vanished since the caller's version.
    StaleVersion,
    /// The target exists but the caller has not observed it.
    NotObserved,
    /// The edit's old string matches more than once.
    AmbiguousEdit,
    /// The edit's old string does not occur.
    EditNotFound,
    /// The path leaves the provider's root.
    SandboxDenied,
    /// The operating system or store refused access.
    PermissionDenied,
    /// The content exceeds a limit.
    TooLarge,
    /// Any other I/O failure.
    IoError,
    /// Cancelled or timed out before taking effect.
    Aborted,
    /// The request itself is malformed.
    InvalidInput,
    /// Another process holds the lock the change needs; nothing changed.
    Busy,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::NotFound,
        ErrorCode::NotText,
        ErrorCode::NotRegularFile,
        ErrorCode::NotDirectory,
        ErrorCode::StaleVersion,
        ErrorCode::NotObserved,
        ErrorCode::AmbiguousEdit,
        ErrorCode::EditNotFound,
        ErrorCode::SandboxDenied,
        ErrorCode::PermissionDenied,
        ErrorCode::TooLarge,
        ErrorCode::IoError,
        ErrorCode::Aborted,
        ErrorCode::InvalidInput,
        ErrorCode::Busy,
    ];

    /// The stable model-facing code, e.g. `FS_STALE_VERSION`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "FS_NOT_FOUND",
            ErrorCode::NotText => "FS_NOT_TEXT",
            ErrorCode::NotRegularFile => "FS_NOT_REGULAR_FILE",
            ErrorCode::NotDirectory => "FS_NOT_DIRECTORY",
            ErrorCode::StaleVersion => "FS_STALE_VERSION",
            ErrorCode::NotObserved => "FS_NOT_OBSERVED",
            ErrorCode::AmbiguousEdit => "FS_AMBIGUOUS_EDIT",
            ErrorCode::EditNotFound => "FS_EDIT_NOT_FOUND",
            ErrorCode::SandboxDenied => "FS_SANDBOX_DENIED",
            ErrorCode::PermissionDenied => "FS_PERMISSION_DENIED",
            ErrorCode::TooLarge => "FS_TOO_LARGE",
            ErrorCode::IoError => "FS_IO_ERROR",
            ErrorCode::Aborted => "FS_ABORTED",
            ErrorCode::InvalidInput => "FS_INVALID_INPUT",
            ErrorCode::Busy => "FS_BUSY",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed filesystem operation: a stable code and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsError {
    /// What went wrong, for programs.
    pub code: ErrorCode,
    /// What went wrong, for people.
    pub message: String,
}

impl FsError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        FsError {
            code,
            message: message.into(),
        }
    }

    /// `not-found` naming `path`.
    #[cold]
    pub fn not_found(path: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{path} does not exist"))
    }

    /// `sandbox-denied` naming `path`.
    #[cold]
    pub fn sandbox_denied(path: &str) -> Self {
        Self::new(
            ErrorCode::SandboxDenied,
            format!("{path} is outside the workspace root"),
        )
    }

    /// `stale-version` naming `path`.
    #[cold]
    pub fn stale(path: &str) -> Self {
        Self::new(
            ErrorCode::StaleVersion,
            format!("{path} changed since it was last read"),
        )
    }

    /// `not-text` naming `path` and why.
    #[cold]
    pub fn not_text(path: &str, why: &str) -> Self {
        Self::new(
            ErrorCode::NotText,
            format!("{path} is not UTF-8 text ({why})"),
        )
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for FsError {}
