//! The `dsh-fs` command component: `wasi:cli/run` serving JSON lines on
//! stdin/stdout through the imported `dsh:fs/tools`, one session for the
//! whole run. Built natively it only says how to build and run it.
//!
//! Arguments: `--no-policy` turns off read-before-write/edit;
//! `--definitions` prints the tool definitions as a JSON array and exits.

#[cfg(target_arch = "wasm32")]
mod component {
    //! The WIT glue: the imported tools session behind [`dsh_fs_command::serve`].

    use dsh_fs_command::{Reply, serve};
    use serde::Serialize;
    use serde_json::Value;
    use std::io::{self, Write};

    wit_bindgen::generate!({
        world: "fs-cli",
        path: "../../wit/since_v0.1.0",
    });

    use dsh::fs::tools;

    const USAGE: &str = "usage: dsh_fs_cli.wasm [--no-policy | --definitions]\n\
        Reads one JSON request per line on stdin, {\"tool\":\"read\",\"arguments\":{...}},\n\
        and writes one JSON result per line on stdout. Files live under the provider's\n\
        root: /work, or $DSH_FS_ROOT (wasmtime run --dir HOST_DIR::/work ...).\n";

    /// Runs the command; the process exit code.
    pub fn main() -> i32 {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut policy = true;
        for arg in &args {
            match arg.as_str() {
                "--no-policy" => policy = false,
                "--definitions" => return definitions(),
                "-h" | "--help" => {
                    print!("{USAGE}");
                    return 0;
                }
                other => {
                    eprint!("unknown argument `{other}`\n{USAGE}");
                    return 1;
                }
            }
        }
        let session = tools::Session::new(tools::SessionOptions {
            observation_policy: policy,
            journal_bytes: 32 << 20,
        });
        let served = serve(io::stdin().lock(), io::stdout().lock(), |tool, args| {
            let r = session.execute(tool, args);
            Reply {
                text: r.text,
                error: r.error.map(|e| dsh_fs_command::ReplyError {
                    code: e.code,
                    message: e.message,
                }),
            }
        });
        match served {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("dsh-fs: {e}");
                1
            }
        }
    }

    /// One tool as `--definitions` prints it: its fields in alphabetical
    /// order, the JSON Schema as JSON rather than as text.
    #[derive(Serialize)]
    struct Definition {
        description: String,
        guidance: String,
        name: String,
        parameters: Value,
    }

    fn definitions() -> i32 {
        let defs: Vec<Definition> = tools::definitions()
            .into_iter()
            .map(|d| Definition {
                parameters: serde_json::from_str(&d.parameters)
                    .unwrap_or(Value::String(d.parameters)),
                description: d.description,
                guidance: d.guidance,
                name: d.name,
            })
            .collect();
        let json = serde_json::to_string(&defs).expect("strings and JSON values always serialize");
        let mut out = io::stdout().lock();
        match writeln!(out, "{json}") {
            Ok(()) => 0,
            Err(_) => 1,
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    std::process::exit(component::main());
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "dsh-fs-command is a WebAssembly command component. Build and compose it with \
         `cargo xtask cli`, then run: \
         wasmtime run --dir DIR::/work target/guest/dsh_fs_cli.wasm"
    );
    std::process::exit(2);
}
