//! `cargo xtask lost-text IN.pdf OUT.pdf`: a copy of a PDF whose fonts lose their Unicode
//! maps (every `/ToUnicode` entry removed). The pages look the same; a text extractor gets
//! glyph codes with no text behind them, as from the PDFs whose fonts were embedded without
//! a map. The fixture of the OCR test for such pages (`fixtures/ocr/`) is made this way.

use anyhow::{Context, bail};
use lopdf::{Document, Object};

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let [input, output] = args else { bail!("usage: cargo xtask lost-text IN.pdf OUT.pdf") };
    let mut document = Document::load(input).with_context(|| input.clone())?;
    let mut removed = 0usize;
    for object in document.objects.values_mut() {
        if let Object::Dictionary(dict) = object
            && dict.remove(b"ToUnicode").is_some()
        {
            removed += 1;
        }
    }
    if removed == 0 {
        bail!("{input}: no font has a /ToUnicode map to remove");
    }
    document.save(output).with_context(|| output.clone())?;
    eprintln!("wrote {output} ({removed} /ToUnicode map(s) removed)");
    Ok(())
}
