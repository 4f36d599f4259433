//! Differential check of the vendored fast content decoder against lopdf, on
//! every stream of the PDFs given: `cargo run --release -p docintel-parse
//! --example content_decoder_check -- FILE.pdf...` (exit 1 on a difference).
use pdf_extract::content::Content;
use pdf_extract::{Document, Object};
fn main() {
    let (mut fast, mut fallback, mut mismatch, mut streams, mut page_fallback) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for path in std::env::args().skip(1) {
        let Ok(mut doc) = Document::load(&path) else { continue };
        let _ = doc.decrypt("");
        let mut datas: Vec<Vec<u8>> = Vec::new();
        for obj in doc.objects.values() {
            if let Object::Stream(s) = obj {
                let data = s.decompressed_content().unwrap_or_else(|_| s.content.clone());
                datas.push(data);
            }
        }
        for page in doc.get_pages().values() {
            if let Ok(c) = doc.get_page_content(*page) {
                if pdf_extract::decode_content_fast(&c).is_none() {
                    page_fallback += 1;
                    if page_fallback < 4 {
                        eprintln!("PAGE FALLBACK {path}");
                    }
                }
                datas.push(c);
            }
        }
        for data in datas {
            streams += 1;
            let want = Content::decode(&data);
            match pdf_extract::decode_content_fast(&data) {
                None => fallback += 1,
                Some(got) => {
                    fast += 1;
                    let ok = match &want {
                        Ok(w) => format!("{:?}", w.operations) == format!("{:?}", got.operations),
                        Err(_) => false,
                    };
                    if !ok {
                        mismatch += 1;
                        if mismatch < 5 {
                            eprintln!(
                                "MISMATCH in {path}: {:?}",
                                String::from_utf8_lossy(&data[..data.len().min(200)])
                            );
                        }
                    }
                }
            }
        }
    }
    println!("streams {streams} fast {fast} fallback {fallback} mismatch {mismatch} page_fallback {page_fallback}");
    if mismatch > 0 {
        std::process::exit(1);
    }
}
