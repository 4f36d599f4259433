//! A page rendered to a grey image for OCR, in process, by `hayro` (pure Rust, MIT/Apache-2.0),
//! with the map from the image's pixels back to the page's PDF user space (the space the
//! text layer's boxes are in: origin bottom-left, points, media box offset kept).

use std::sync::Arc;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_interpret::util::TransformExt;
use hayro::hayro_syntax::Pdf;
use hayro::kurbo::{Affine, Point};
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{PixmapSettings, RenderCache, RenderSettings};

use docintel_schema::BBox;

/// The longest side of a rendered page, in pixels (a poster at 300 dpi is drawn smaller).
const MAX_SIDE: f32 = 8000.0;
/// The most pixels in a rendered page (about 200 MB of RGBA while drawing).
const MAX_PIXELS: f32 = 50.0e6;

/// A page drawn as 8-bit grey pixels (see [`render_page`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PageImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The resolution it was drawn at, dots per inch (lower than asked for a huge page).
    pub dpi: f32,
    /// `width × height` grey values, rows top to bottom, 0 black, 255 white.
    pub gray: Vec<u8>,
}

impl PageImage {
    /// The image as a binary PGM (`P5`) file: what tesseract reads on its standard input.
    pub(crate) fn pgm(&self) -> Vec<u8> {
        let mut pgm = format!("P5\n{} {}\n255\n", self.width, self.height).into_bytes();
        pgm.extend_from_slice(&self.gray);
        pgm
    }
}

/// Draws page `page` (1-based, page-tree order) of the PDF `bytes` at `dpi` dots per inch,
/// on white, in grey (pages over 8,000 pixels a side or 50 million pixels drawn smaller).
/// `Err` says why it cannot be drawn.
pub fn render_page(bytes: &[u8], password: Option<&str>, page: u32, dpi: u32) -> Result<PageImage, String> {
    let data = Arc::new(bytes.to_vec());
    let index = (page as usize).checked_sub(1).ok_or("page numbers start at 1")?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| draw(&data, password, index, dpi as f32)))
        .map_err(|panic| format!("the renderer panicked: {}", crate::workers::panic_message(&panic)))?
        .map(|drawn| drawn.image)
}

/// One page drawn, with the way back to its PDF space.
pub(crate) struct Rendered {
    pub(crate) image: PageImage,
    /// Image pixels (origin top-left, y down) to PDF user space.
    to_pdf: Affine,
}

impl Rendered {
    /// The PDF user-space box (origin bottom-left) of a pixel rectangle.
    pub(crate) fn pdf_box(&self, left: f64, top: f64, right: f64, bottom: f64) -> BBox {
        let corners =
            [(left, top), (right, top), (left, bottom), (right, bottom)].map(|(x, y)| self.to_pdf * Point::new(x, y));
        let xs = corners.map(|p| p.x as f32);
        let ys = corners.map(|p| p.y as f32);
        BBox {
            x0: xs.iter().copied().fold(f32::INFINITY, f32::min),
            y0: ys.iter().copied().fold(f32::INFINITY, f32::min),
            x1: xs.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            y1: ys.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        }
    }
}

/// Draws page `index` (0-based, in page-tree order) of the PDF at `dpi`.
pub(crate) fn draw(data: &Arc<Vec<u8>>, password: Option<&str>, index: usize, dpi: f32) -> Result<Rendered, String> {
    let pdf = match password {
        Some(password) => Pdf::new_with_password(data.clone(), password),
        None => Pdf::new(data.clone()),
    }
    .map_err(|e| format!("the renderer cannot open the file ({e:?})"))?;
    let pages = pdf.pages();
    let page = pages
        .get(index)
        .ok_or_else(|| format!("the renderer finds {} page(s), not page {}", pages.len(), index + 1))?;
    let (width, height) = page.render_dimensions();
    if !(width.is_finite() && height.is_finite() && width >= 1.0 && height >= 1.0) {
        return Err(format!("page size {width}×{height} points cannot be drawn"));
    }
    let mut scale = dpi / 72.0;
    scale = scale.min(MAX_SIDE / width.max(height)).min((MAX_PIXELS / (width * height)).sqrt());
    let cache = RenderCache::new();
    let settings = InterpreterSettings::default();
    let pixmap_settings = PixmapSettings { x_scale: scale, y_scale: scale, bg_color: WHITE };
    let pixmap = hayro::render(page, &cache, &settings, &RenderSettings::default(), &pixmap_settings);
    let (w, h) = (usize::from(pixmap.width()), usize::from(pixmap.height()));
    if w == 0 || h == 0 {
        return Err("the page drew to an empty image".into());
    }
    // Premultiplied on an opaque white background: alpha is 255, the channels are the colour.
    let gray: Vec<u8> = pixmap
        .data()
        .iter()
        .map(|p| ((u32::from(p.r) * 299 + u32::from(p.g) * 587 + u32::from(p.b) * 114) / 1000) as u8)
        .collect();
    let to_image = Affine::scale(f64::from(scale)) * page.initial_transform(true).to_kurbo();
    if to_image.determinant().abs() < 1e-12 {
        return Err("the page's transform cannot be inverted".into());
    }
    let image = PageImage { width: w as u32, height: h as u32, dpi: scale * 72.0, gray };
    Ok(Rendered { image, to_pdf: to_image.inverse() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-page PDF with this page dictionary body (no content).
    fn pdf(page: &str) -> Vec<u8> {
        let objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page];
        let mut out = b"%PDF-1.7\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
        }
        let xref = out.len();
        out.extend_from_slice(b"xref\n0 4\n0000000000 65535 f \n");
        for offset in offsets {
            out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(format!("trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes());
        out
    }

    fn close(a: BBox, b: BBox) -> bool {
        [a.x0 - b.x0, a.y0 - b.y0, a.x1 - b.x1, a.y1 - b.y1].iter().all(|d| d.abs() < 0.5)
    }

    #[test]
    fn pixel_boxes_map_back_to_pdf_space_on_turned_and_offset_pages() {
        // Turned a quarter: the image is portrait, the media box landscape.
        let data = Arc::new(pdf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Rotate 90 >>"));
        let drawn = draw(&data, None, 0, 144.0).unwrap();
        assert_eq!((drawn.image.width, drawn.image.height), (200, 400));
        let whole = drawn.pdf_box(0.0, 0.0, 200.0, 400.0);
        assert!(close(whole, BBox { x0: 0.0, y0: 0.0, x1: 200.0, y1: 100.0 }), "{whole:?}");
        // The top-left pixel of the shown page is the PDF's bottom-left corner, turned.
        let corner = drawn.pdf_box(0.0, 0.0, 2.0, 2.0);
        assert!(close(corner, BBox { x0: 0.0, y0: 0.0, x1: 1.0, y1: 1.0 }), "{corner:?}");
        // A media box away from the origin: boxes keep its offset, y up.
        let data = Arc::new(pdf("<< /Type /Page /Parent 2 0 R /MediaBox [50 20 250 120] >>"));
        let drawn = draw(&data, None, 0, 72.0).unwrap();
        let top_left = drawn.pdf_box(0.0, 0.0, 10.0, 10.0);
        assert!(close(top_left, BBox { x0: 50.0, y0: 110.0, x1: 60.0, y1: 120.0 }), "{top_left:?}");
    }
}
