//! Fidelity tool: dumps each parsed PDF as one JSON document per line, to
//! diff the output of two parser versions byte for byte.
fn main() {
    for path in std::env::args().skip(1) {
        let out = match docintel_parse::parse_pdf(std::path::Path::new(&path)) {
            Ok(doc) => serde_json::to_string(&doc).unwrap_or_default(),
            Err(e) => format!("{{\"error\": {:?}}}", e.to_string()),
        };
        println!("{out}");
    }
}
