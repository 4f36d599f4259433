//! PDFs written byte by byte (no PDF library): [`figure_pdf`], a small report with a
//! logo on every page and one real figure.

/// A three-page report: the same small logo image at the top of every page (decoration,
/// never a figure), and on page 2 a large image under the caption "Figure 1: Revenue by
/// year" (a figure page). Page 1 reads "Annual report 2024" / "The revenue chart is on
/// the next page."; page 3 "Contact: info@example.com". Helvetica, not embedded.
pub fn figure_pdf() -> Vec<u8> {
    let page_text = [
        vec!["Annual report 2024", "The revenue chart is on the next page."],
        vec!["Figure 1: Revenue by year"],
        vec!["Contact: info@example.com"],
    ];
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [6 0 R 8 0 R 10 0 R] /Count 3 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        image(b"\x80"),
        image(b"\x30"),
    ];
    for (index, lines) in page_text.iter().enumerate() {
        let mut content = String::from("q 40 0 0 20 30 800 cm /Logo Do Q ");
        if index == 1 {
            content.push_str("q 500 0 0 400 50 250 cm /Photo Do Q ");
        }
        for (i, line) in lines.iter().enumerate() {
            content.push_str(&format!("BT /F1 12 Tf 72 {} Td ({line}) Tj ET ", 760 - 20 * i));
        }
        let contents_id = objects.len() + 2;
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents {contents_id} 0 R /Resources \
                 << /Font << /F1 3 0 R >> /XObject << /Logo 4 0 R /Photo 5 0 R >> >> >>"
            )
            .into_bytes(),
        );
        objects.push(stream("", content.as_bytes()));
    }
    let mut pdf = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(object);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    pdf
}

/// A 1 × 1 grey image of one byte.
fn image(gray: &[u8]) -> Vec<u8> {
    stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8", gray)
}

fn stream(entries: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {entries} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}
