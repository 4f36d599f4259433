//! Stamps the build with a hash of the question parser's sources (rules and
//! data files): `DOCINTEL_QUESTION_SOURCE_STAMP`, recorded with every saved
//! parsed question so a parse made by other rules is not reused.

include!("../../build-support/source_stamp.rs");

fn main() {
    emit_source_stamp("DOCINTEL_QUESTION_SOURCE_STAMP", &["src", "data", "Cargo.toml"]);
}
