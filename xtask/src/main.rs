//! Project automation: `cargo xtask tidy`, `cargo xtask eval`.
//!
//! - `tidy` checks the architecture rules (allowed crate edges, `//!` module
//!   docs, used dependencies, no module import circle and no long file in
//!   the crates held to it); it also runs as a `#[test]` so `cargo test`
//!   enforces it.
//! - `link-check` builds and runs a scratch crate outside the workspace that
//!   depends on every library crate by path (`.ci/run` runs it).
//! - `eval [--shared DIR] [--csv FILE]` answers the gold questions of the
//!   invoice sets and prints per-field accuracy.
//! - `fit-reader --shared DIR` fits the extractive reader's model on the
//!   tuning questions; `candidates FILE QUESTION` prints every candidate the
//!   reader scored for one question, with its features; `fit-types --shared
//!   DIR` fits the question brick's learned answer-type model.
//! - `eval-retrieval --shared DIR` measures TOC routing against flat keyword
//!   retrieval on the NIST SP 800-53 gold questions.
//! - `bench kb` times `docintel kb add`/`kb ask` against `ask --corpus`;
//!   `bench serve` loads `docintel serve` with 1, 4 and 8 clients against the
//!   same questions asked in process;
//!   `bench parse` compares the PDF parser with PyMuPDF (speed, RSS, fidelity);
//!   `stress` parses every stress fixture in a child process with a timeout.
//! - `eval ocr [--shared DIR]` asks the policy questions of an image-only copy of a
//!   shared policy and of the original, and measures OCR character accuracy.
//! - `image-only IN.pdf OUT.pdf` writes a copy of a PDF with its pages drawn as
//!   images and no text layer (the scanned fixtures of the OCR tests).
//! - `lost-text IN.pdf OUT.pdf` writes a copy of a PDF whose fonts have no Unicode maps
//!   (the fixture of the OCR test for pages whose text layer gives no text).

mod bench;
mod bench_kb;
mod bench_serve;
mod bm25;
mod child;
mod eval;
mod eval_dev;
mod eval_generation;
mod eval_llm;
mod eval_ocr;
mod eval_report;
mod eval_retrieval;
mod eval_sets;
mod fit_reader;
mod fit_types;
mod image_only;
mod link_check;
mod llama;
mod lost_text;
mod models;
mod split;
mod stress;
mod tidy;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("tidy") => tidy::run(),
        Some("link-check") => link_check::run(&args[1..]),
        Some("eval") => eval::run(&args[1..]),
        Some("eval-retrieval") => eval_retrieval::run(&args[1..]),
        Some("fit-reader") => fit_reader::run(&args[1..]),
        Some("fit-types") => fit_types::run(&args[1..]),
        Some("candidates") => fit_reader::candidates(&args[1..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("kb") => bench_kb::run(&args[2..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("serve") => bench_serve::run(&args[2..]),
        Some("bench") => bench::run(&args[1..]),
        Some("stress") => stress::run(&args[1..]),
        Some("llama") => llama::run(&args[1..]),
        Some("image-only") => image_only::run(&args[1..]),
        Some("lost-text") => lost_text::run(&args[1..]),
        Some(command @ ("fetch-model" | "eval-embeddings")) => models::run(command, &args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <tidy | link-check [--keep] | eval [--shared DIR] [--csv FILE] [--min-accuracy F] | fit-reader --shared DIR [--wrong-cost C] [--alpha A] [--dry-run] | fit-types --shared DIR [--dry-run] [--dump FILE] | candidates FILE QUESTION [N] | eval-retrieval --shared DIR [--verbose] | fetch-model minilm [--dir DIR] | eval-embeddings [--shared DIR] [--model DIR] | bench kb [--shared DIR] [--questions N] [--encrypted] [--pdfs DIR] | bench serve [--pdfs DIR] [--questions N] [--clients 1,4,8] [--max-concurrent N] | bench parse [--files FILE...] [--shared DIR] [--python PY] | stress [--shared DIR] [--timeout SECS] | llama [setup|test] [--model tiny|small] [--release] | image-only IN.pdf OUT.pdf [--dpi N] [--pages 1,3] | lost-text IN.pdf OUT.pdf>"
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
