//! A component that implements the `fs-tools` world the way an attacker or a
//! badly broken build would: it spins, eats memory, returns huge results and
//! hoards provider resources. The host's limits must stop each of these and
//! keep serving other sessions.

wit_bindgen::generate!({ world: "fs-tools", path: "../../wit/since_v0.1.0" });

use dsh::fs::provider;
use exports::dsh::fs::tools::{Guest, GuestSession, SessionOptions, ToolDefinition, ToolResult};

struct Hostile;

impl Guest for Hostile {
    type Session = Session;

    fn definitions() -> Vec<ToolDefinition> {
        Vec::new()
    }

    fn extra_definitions() -> Vec<ToolDefinition> {
        Vec::new()
    }
}

struct Session;

impl GuestSession for Session {
    fn new(_: SessionOptions) -> Self {
        Session
    }

    fn execute(&self, tool: String, arguments: String) -> ToolResult {
        let text = match tool.as_str() {
            "spin" => loop {
                std::hint::black_box(&arguments);
            },
            "eat-memory" => {
                let mut hoard = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "huge-result" => "x".repeat(16 << 20),
            "hoard-targets" => {
                let mut targets = Vec::new();
                loop {
                    match provider::resolve("a.txt") {
                        Ok(t) => targets.push(t),
                        Err(e) => return answer(format!("resolve failed: {}", e.message)),
                    }
                }
            }
            "panic" => panic!("deliberate"),
            _ => format!("echo {arguments}"),
        };
        answer(text)
    }
}

fn answer(text: String) -> ToolResult {
    ToolResult {
        text,
        is_error: false,
        error: None,
    }
}

export!(Hostile);
