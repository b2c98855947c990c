//! The `opsbot` binary; everything lives in the library so that tests drive the same code.

fn main() -> std::process::ExitCode {
    opsbot::cli::main()
}
