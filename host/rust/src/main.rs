//! The `dsh-fs` binary: the command line of [`dsh_fs::cli`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(dsh_fs::cli::main(std::env::args_os()))
}
