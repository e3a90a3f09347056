//! Argument parsing and dispatch: any tool name and any arguments text give
//! a result (never a panic), and malformed arguments give `INVALID_ARGS`.
#![no_main]

use dsh_fs_core::{
    EditOutcome, EditRequest, ErrorCode, FsError, FsInfo, TextContent, WriteIntent, WriteOperation,
    WriteOutcome,
};
use dsh_fs_tools::{Provider, Resolved, Session, TextStream};
use libfuzzer_sys::fuzz_target;

/// A one-file workspace: `a.txt` holds fixed text; every other path is absent.
#[derive(Debug)]
struct OneFile;

/// A path as given.
struct Name(String);

impl Resolved for Name {
    fn display_path(&self) -> String {
        self.0.clone()
    }
    fn key(&self) -> String {
        self.0.clone()
    }
}

const TEXT: &str = "alpha\nbeta\r\ngamma\n";

impl Provider for OneFile {
    type Target = Name;
    type Stream = Never;
    type Listing = Never;

    fn resolve(&self, path: &str) -> Result<Name, FsError> {
        if path.is_empty() || path.contains('\0') {
            return Err(FsError::new(ErrorCode::InvalidInput, "bad path"));
        }
        Ok(Name(path.to_owned()))
    }
    fn stat(&self, _: &Name) -> Result<Option<FsInfo>, FsError> {
        Ok(None)
    }
    fn read_text(&self, t: &Name, _: u64) -> Result<TextContent, FsError> {
        match t.0.as_str() {
            "a.txt" => Ok(TextContent { text: TEXT.into(), version: "v1".into() }),
            _ => Err(FsError::not_found(&t.0)),
        }
    }
    fn stream_text(&self, t: &Name, _: u64) -> Result<Never, FsError> {
        Err(FsError::not_found(&t.0))
    }
    fn write_text(&self, _: &Name, _: &str, _: Option<WriteIntent>) -> Result<WriteOutcome, FsError> {
        Ok(WriteOutcome { operation: WriteOperation::Created, version: "v2".into() })
    }
    fn edit_text(&self, _: &Name, edit: &EditRequest, _: Option<&str>) -> Result<EditOutcome, FsError> {
        let out = dsh_fs_core::splice::apply(TEXT.as_bytes(), edit).map_err(|e| e.into_fs_error("a.txt"))?;
        Ok(EditOutcome { replacements: out.replacements, version: "v3".into(), first_line: out.first_line, excerpt: None })
    }
    fn list_dir(&self, t: &Name) -> Result<Never, FsError> {
        Err(FsError::not_found(&t.0))
    }
}

impl dsh_fs_tools::Listing for Never {
    fn next_entries(&mut self, _: u32) -> Result<Vec<dsh_fs_core::DirEntry>, FsError> {
        match *self {}
    }
    fn skipped(&self) -> u64 {
        match *self {}
    }
}

/// `OneFile` never streams or lists.
enum Never {}

impl TextStream for Never {
    fn next_chunk(&mut self, _: u32) -> Result<Option<String>, FsError> {
        match *self {}
    }
    fn skip(&mut self, _: u32, _: u64) -> Result<Option<dsh_fs_core::Skipped>, FsError> {
        match *self {}
    }
    fn version(&self) -> Option<String> {
        match *self {}
    }
}

fuzz_target!(|input: (u8, &str)| {
    let (which, arguments) = input;
    let tool = ["read", "write", "edit", "bogus"][usize::from(which % 4)];
    let mut session = Session::new(OneFile, which & 4 == 0);
    session.execute("read", r#"{"file_path":"a.txt"}"#);
    let result = session.execute(tool, arguments);
    if let Some(error) = &result.error {
        assert!(!error.code.is_empty() && !error.message.is_empty());
        assert!(!error.message.contains('\n'), "messages are one line");
        if serde_json_is_not_an_object(arguments) && tool != "bogus" {
            assert_eq!(error.code, "INVALID_ARGS");
        }
    }
});

/// Whether `s` is not a JSON object (cheap check without a JSON dependency).
fn serde_json_is_not_an_object(s: &str) -> bool {
    !s.trim_start().starts_with('{')
}
