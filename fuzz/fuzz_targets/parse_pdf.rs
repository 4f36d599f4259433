//! Fuzz target: `docintel_parse::parse_pdf_bytes` must return `Ok` or a
//! `ParseError` on any input, never panic, hang or abort.
//!
//! Run (nightly toolchain and `cargo install cargo-fuzz`):
//! `cd fuzz && cargo +nightly fuzz run parse_pdf -- -max_total_time=600 -timeout=30`
//! Seed the corpus with real PDFs: `cp ../../shared/fixtures/stress/*/*.pdf corpus/parse_pdf/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Mostly-random bytes are refused at the header check; prefix one so the
    // fuzzer spends its time inside the PDF loader and the page loop.
    if data.starts_with(b"%PDF-") {
        let _ = docintel_parse::parse_pdf_bytes("fuzz.pdf", data);
    } else {
        let mut bytes = b"%PDF-1.7\n".to_vec();
        bytes.extend_from_slice(data);
        let _ = docintel_parse::parse_pdf_bytes("fuzz.pdf", &bytes);
    }
});
