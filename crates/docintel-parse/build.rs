//! Stamps the build with a hash of the parser's sources (this crate and the
//! vendored pdf-extract fork): `DOCINTEL_PARSE_SOURCE_STAMP`, recorded in
//! `profile.json` so a table folder written by other parser code is stale.

include!("../../build-support/source_stamp.rs");

fn main() {
    emit_source_stamp("DOCINTEL_PARSE_SOURCE_STAMP", &["src", "Cargo.toml", "../../vendor/pdf-extract/src"]);
}
