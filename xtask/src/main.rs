//! Project automation: `cargo xtask tidy`, `cargo xtask eval`.
//!
//! - `tidy` checks the architecture rules (allowed crate edges, `//!` module
//!   docs); it also runs as a `#[test]` so `cargo test` enforces it.
//! - `eval [--shared DIR] [--csv FILE]` answers the gold questions of the
//!   invoice sets and prints per-field accuracy.
//! - `eval-retrieval --shared DIR` measures TOC routing against flat keyword
//!   retrieval on the NIST SP 800-53 gold questions.

mod eval;
mod eval_retrieval;
mod tidy;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("tidy") => tidy::run(),
        Some("eval") => eval::run(&args[1..]),
        Some("eval-retrieval") => eval_retrieval::run(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <tidy | eval [--shared DIR] [--csv FILE] [--min-accuracy F] | eval-retrieval --shared DIR [--verbose]>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}
