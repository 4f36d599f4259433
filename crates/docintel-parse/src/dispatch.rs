//! The format dispatch of [`parse_file`]: a document file to the reader its
//! bytes and extension call for (PDF, DOCX, plain text or Markdown).

use std::path::Path;

use docintel_schema::ParsedDocument;

use crate::textdoc::parse_text_bytes;
use crate::{ParseError, ParseOptions};

/// Parses a document, choosing the reader from its bytes and extension:
/// `%PDF-` in the first KiB → PDF; `.docx`, or a ZIP archive holding
/// `word/document.xml` → DOCX (see the `docx` module; a broken one is
/// [`ParseError::BadDocx`]); `.txt` / `.md` / `.markdown`, or bytes that are
/// valid UTF-8 text (no NUL) → text; anything else →
/// [`ParseError::UnsupportedFormat`]. A `.pdf` without a header stays
/// [`ParseError::NotPdf`].
pub fn parse_file(path: &Path) -> Result<ParsedDocument, ParseError> {
    parse_file_with_options(path, &ParseOptions::default())
}

/// [`parse_file`] with options: the password of an encrypted PDF (see
/// [`ParseOptions`]); other formats ignore it.
pub fn parse_file_with_options(path: &Path, options: &ParseOptions) -> Result<ParsedDocument, ParseError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ParseError::NotFound { path: name.clone() },
        _ => ParseError::Io { path: name.clone(), source },
    })?;
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let head = &bytes[..bytes.len().min(1024)];
    if head.windows(5).any(|w| w == b"%PDF-") {
        return crate::parse_pdf_bytes_with_options(&name, &bytes, options);
    }
    let is_zip = bytes.starts_with(b"PK\x03\x04");
    match ext.as_str() {
        "pdf" => Err(ParseError::NotPdf { path: name }),
        "docx" => crate::docx::parse_docx_bytes(&name, &bytes),
        "md" | "markdown" => Ok(parse_text_bytes(&name, &bytes, true)),
        "txt" | "text" => Ok(parse_text_bytes(&name, &bytes, false)),
        _ if is_zip && bytes.windows(17).any(|w| w == b"word/document.xml") => {
            crate::docx::parse_docx_bytes(&name, &bytes)
        }
        _ if is_zip => Err(ParseError::UnsupportedFormat { path: name, reason: "a ZIP archive".into() }),
        _ if !bytes.contains(&0) && std::str::from_utf8(&bytes).is_ok() => Ok(parse_text_bytes(&name, &bytes, false)),
        _ => Err(ParseError::UnsupportedFormat { path: name, reason: "neither a PDF nor UTF-8 text".into() }),
    }
}
