//! `cargo xtask image-only IN.pdf OUT.pdf [--dpi N] [--pages 1,3]`: a copy of a PDF whose
//! pages (all, or those listed) are drawn as grey images by the parser's renderer
//! (`docintel::render_page`, hayro) and written back with no text layer: a scanned document
//! made from a born-digital one, for the OCR tests (`fixtures/ocr/`) and OCR measurements.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use docintel::PageImage;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dpi = 200u32;
    let mut pages: Option<Vec<u32>> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--dpi" => {
                dpi = args.get(i + 1).context("--dpi N")?.parse().context("--dpi N")?;
                i += 1;
            }
            "--pages" => {
                let list = args.get(i + 1).context("--pages 1,2")?;
                pages = Some(list.split(',').map(|p| p.trim().parse::<u32>()).collect::<Result<_, _>>()?);
                i += 1;
            }
            other => files.push(PathBuf::from(other)),
        }
        i += 1;
    }
    let [input, output] = files.as_slice() else {
        bail!("usage: cargo xtask image-only IN.pdf OUT.pdf [--dpi N] [--pages 1,3]")
    };
    let bytes = std::fs::read(input).with_context(|| format!("{}", input.display()))?;
    let pages = match pages {
        Some(p) => p,
        None => {
            let document = docintel::parse_file_with_options(
                input,
                &docintel::ParseOptions::default().with_ocr(docintel::OcrOptions::disabled()),
            )?;
            (1..=document.pages.len() as u32).collect()
        }
    };
    let images = pages
        .iter()
        .map(|&p| {
            docintel::render_page(&bytes, None, p, dpi)
                .map_err(|why| anyhow::anyhow!("{}: page {p}: {why}", input.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    std::fs::write(output, image_only_pdf(&images)?).with_context(|| format!("{}", output.display()))?;
    eprintln!("wrote {} ({} page(s) at {dpi} dpi, no text layer)", output.display(), images.len());
    Ok(())
}

/// A PDF with one page per image, each page the image's size (at its dpi), nothing else.
pub(crate) fn image_only_pdf(images: &[PageImage]) -> anyhow::Result<Vec<u8>> {
    let mut out: Vec<u8> = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets: Vec<usize> = Vec::new();
    let n = images.len();
    // Objects: 1 catalog, 2 page tree, then per page: page, content, image.
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 3 + 3 * i)).collect();
    let mut object = |out: &mut Vec<u8>, body: &[u8]| {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", offsets.len()).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    };
    object(&mut out, b"<< /Type /Catalog /Pages 2 0 R >>");
    object(&mut out, format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).as_bytes());
    for (i, image) in images.iter().enumerate() {
        let (w, h) = (image.width as f32 * 72.0 / image.dpi, image.height as f32 * 72.0 / image.dpi);
        let (content, xobject) = (4 + 3 * i, 5 + 3 * i);
        object(
            &mut out,
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.2} {h:.2}] /Resources << /XObject << /Im0 {xobject} 0 R >> >> /Contents {content} 0 R >>"
            )
            .as_bytes(),
        );
        let draw = format!("q {w:.2} 0 0 {h:.2} 0 0 cm /Im0 Do Q");
        object(&mut out, format!("<< /Length {} >>\nstream\n{draw}\nendstream", draw.len()).as_bytes());
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&image.gray)?;
        let data = encoder.finish()?;
        let mut body = format!(
            "<< /Type /XObject /Subtype /Image /Width {} /Height {} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length {} >>\nstream\n",
            image.width,
            image.height,
            data.len()
        )
        .into_bytes();
        body.extend_from_slice(&data);
        body.extend_from_slice(b"\nendstream");
        object(&mut out, &body);
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes());
    for offset in &offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", offsets.len() + 1).as_bytes(),
    );
    Ok(out)
}
