//! `cargo xtask eval ocr [--shared DIR] [--dpi N] [--accuracy-dpi N] [--no-accuracy]`: issue
//! 21's first "done when", measured on the shared National Parivar Mediclaim Plus policy.
//!
//! 1. An image-only copy of the policy (every page drawn by [`docintel::render_page`] at
//!    `--dpi`, 200 by default, and written back with no text layer, as
//!    `cargo xtask image-only` does) goes to `target/eval-ocr/`; it is parsed as any scanned
//!    document is, so its lines come from OCR (the count of text-layer lines in it is printed
//!    and must be 0).
//! 2. The policy's questions of the dev gold (`fixtures/eval/dev/*.jsonl`, `doc` = the
//!    policy) are asked of the original (text layer, OCR off) and of the copy. Per question:
//!    whether each is right by the dev scoring ([`crate::eval_dev::score`]), whether the two
//!    answers are the same (folded values, or both refused), whether the copy's cited lines
//!    are all OCR lines, and whether its citations are on the right place: every span the copy
//!    cites is on a page the original cites, and its box ([`near`]) is where one of the
//!    original's cited boxes is. The intersection over union of the boxes is printed too.
//! 3. Character accuracy: the pages drawn at `--accuracy-dpi` (300), read by OCR, against the
//!    original's text layer, page by page (whitespace runs as one space; 1 − edit distance /
//!    reference length), with render and OCR seconds per page.
//!
//! The shared fixtures are not in CI, so this is an xtask, not a test.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use docintel::schema::{AskOutput, BBox, LineSource, ParsedDocument};
use docintel::{AskOptions, OcrOptions, ParseOptions, parse_file, parse_file_with_options};

use crate::eval_dev::DevQuestion;
use crate::eval_sets::fold;

/// The policy of issue 21's "done when", relative to the shared fixtures.
const DOC: &str = "insurance/National_Parivar_Mediclaim_Plus_Policy.pdf";

/// How far (PDF points) a cited box's centre may lie outside the box it is compared with.
const TOLERANCE: f32 = 4.0;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut shared = crate::bench::default_shared();
    let (mut dpi, mut accuracy_dpi, mut accuracy) = (200u32, 300u32, true);
    let mut i = 0;
    while i < args.len() {
        let value = || args.get(i + 1).with_context(|| format!("{} needs a value", args[i]));
        match args[i].as_str() {
            "--shared" => shared = PathBuf::from(value()?),
            "--dpi" => dpi = value()?.parse().context("--dpi N")?,
            "--accuracy-dpi" => accuracy_dpi = value()?.parse().context("--accuracy-dpi N")?,
            "--no-accuracy" => {
                accuracy = false;
                i += 1;
                continue;
            }
            other => bail!("unknown option {other}"),
        }
        i += 2;
    }
    let pdf = shared.join(DOC);
    let bytes = std::fs::read(&pdf).with_context(|| format!("cannot read {}", pdf.display()))?;
    let original = parse_file_with_options(&pdf, &ParseOptions::default().with_ocr(OcrOptions::disabled()))?;
    let pages = original.pages.len() as u32;
    let out_dir = crate::tidy::project_root().join("target/eval-ocr");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;

    let copy = image_only_copy(&bytes, pages, dpi, &out_dir)?;
    let clock = Instant::now();
    let scanned = parse_file(&copy.path)?;
    let ocr_seconds = clock.elapsed().as_secs_f64();
    let text_layer_lines =
        scanned.lines.iter().filter(|l| scanned.line_source(l.line_id) == LineSource::TextLayer).count();
    println!(
        "{}: {pages} pages drawn at {dpi} dpi in {:.2} s/page; parsed with OCR in {:.2} s/page; {} lines, {text_layer_lines} from a text layer",
        copy.path.display(),
        copy.seconds / f64::from(pages),
        ocr_seconds / f64::from(pages),
        scanned.lines.len(),
    );

    let questions = questions()?;
    let options = AskOptions::new(5);
    let parser = docintel::question_parser(&options)?;
    println!();
    println!(
        "{:<26} {:<5} {:<5} {:<5} {:<5} {:<5} {:<5} {:<30} {:<30}",
        "question", "orig", "ocr", "same", "page", "box", "iou", "original", "image-only copy"
    );
    let mut rows = Vec::new();
    for q in &questions {
        let (before, _) = crate::eval_sets::ask(&parser, &options, &original, &q.question)?;
        let (after, _) = crate::eval_sets::ask(&parser, &options, &scanned, &q.question)?;
        let row = compare(q, &before, &original, &after, &scanned);
        println!(
            "{:<26} {:<5} {:<5} {:<5} {:<5} {:<5} {:<5} {:<30} {:<30}",
            q.id,
            yes(row.original_right),
            yes(row.copy_right),
            yes(row.same_answer),
            row.same_page.map_or("-", yes),
            row.box_near.map_or("-", yes),
            row.iou.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}")),
            clip(&answer_text(&before), 30),
            clip(&answer_text(&after), 30),
        );
        if !row.from_ocr {
            println!("  {}: the copy's answer cites a line that is not an OCR line", q.id);
        }
        rows.push(row);
    }
    let n = rows.len();
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let cited = count(&|r| r.box_near.is_some());
    println!();
    println!(
        "questions {n}: right on the original {}/{n}, on the copy {}/{n}",
        count(&|r| r.original_right),
        count(&|r| r.copy_right)
    );
    println!(
        "same answer {}/{n}; copy's citations all OCR lines {}/{n}",
        count(&|r| r.same_answer),
        count(&|r| r.from_ocr)
    );
    println!(
        "both cite ({cited}): same page {}/{cited}, box within {TOLERANCE} pt {}/{cited}",
        count(&|r| r.same_page == Some(true)),
        count(&|r| r.box_near == Some(true)),
    );

    if accuracy {
        println!();
        char_accuracy(&bytes, &original, pages, accuracy_dpi, &out_dir)?;
    }
    Ok(())
}

/// The policy's questions in the dev gold.
fn questions() -> anyhow::Result<Vec<DevQuestion>> {
    let mut out = Vec::new();
    for file in crate::eval_dev::dev_files()? {
        out.extend(crate::eval_dev::read_jsonl(&file)?.into_iter().filter(|q| q.doc == DOC));
    }
    if out.is_empty() {
        bail!("no question on {DOC} in fixtures/eval/dev");
    }
    Ok(out)
}

struct Copy {
    path: PathBuf,
    /// Seconds spent drawing the pages.
    seconds: f64,
}

/// Every page drawn at `dpi` and written as an image-only PDF into `dir`.
fn image_only_copy(bytes: &[u8], pages: u32, dpi: u32, dir: &Path) -> anyhow::Result<Copy> {
    let clock = Instant::now();
    let images = (1..=pages)
        .map(|p| docintel::render_page(bytes, None, p, dpi).map_err(|why| anyhow::anyhow!("page {p}: {why}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let seconds = clock.elapsed().as_secs_f64();
    let path = dir.join(format!("parivar_image_only_{dpi}dpi.pdf"));
    std::fs::write(&path, crate::image_only::image_only_pdf(&images)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Copy { path, seconds })
}

struct Row {
    original_right: bool,
    copy_right: bool,
    same_answer: bool,
    /// Every line the copy's answer cites is an OCR line.
    from_ocr: bool,
    /// When both cite: every page the copy cites is one the original cites.
    same_page: Option<bool>,
    /// When both cite: every box the copy cites is [`near`] one the original cites.
    box_near: Option<bool>,
    /// When both cite: the best intersection over union of the copy's first cited box.
    iou: Option<f32>,
}

fn compare(
    q: &DevQuestion,
    before: &AskOutput,
    original: &ParsedDocument,
    after: &AskOutput,
    scanned: &ParsedDocument,
) -> Row {
    let refused = |o: &AskOutput| !o.answer.feedback.answer_found || o.answer.items.is_empty();
    let same_answer = match (refused(before), refused(after)) {
        (true, true) => true,
        (false, false) => fold(&answer_text(before)) == fold(&answer_text(after)),
        _ => false,
    };
    let (boxes_before, boxes_after) = (cited_boxes(before, original), cited_boxes(after, scanned));
    let mut cited_lines =
        after.answer.items.iter().flat_map(|i| &i.spans).flat_map(|s| scanned.line_range(s.line_start, s.line_end));
    let from_ocr = cited_lines.all(|l| scanned.line_source(l.line_id) == LineSource::Ocr);
    let (mut same_page, mut box_near, mut iou) = (None, None, None);
    if !boxes_before.is_empty() && !boxes_after.is_empty() {
        same_page = Some(boxes_after.iter().all(|(page, _)| boxes_before.iter().any(|(p, _)| p == page)));
        box_near = Some(boxes_after.iter().all(|(page, b)| boxes_before.iter().any(|(p, a)| p == page && near(a, b))));
        let (page, first) = &boxes_after[0];
        iou = Some(boxes_before.iter().filter(|(p, _)| p == page).map(|(_, a)| overlap(a, first)).fold(0.0, f32::max));
    }
    Row {
        original_right: crate::eval_dev::score(q, before),
        copy_right: crate::eval_dev::score(q, after),
        same_answer,
        from_ocr,
        same_page,
        box_near,
        iou,
    }
}

/// Each cited span as its page and the union of its lines' boxes.
fn cited_boxes(output: &AskOutput, document: &ParsedDocument) -> Vec<(u32, BBox)> {
    output
        .answer
        .items
        .iter()
        .flat_map(|i| &i.spans)
        .filter_map(|s| {
            let lines = document.line_range(s.line_start, s.line_end);
            let first = lines.first()?;
            let union = lines.iter().fold(first.bbox, |u, l| BBox {
                x0: u.x0.min(l.bbox.x0),
                y0: u.y0.min(l.bbox.y0),
                x1: u.x1.max(l.bbox.x1),
                y1: u.y1.max(l.bbox.y1),
            });
            Some((first.page, union))
        })
        .collect()
}

/// Whether two boxes mark the same place: the centre of one lies in the other grown by
/// [`TOLERANCE`] (a text-layer line may be one cell of the row an OCR line spans, or the
/// reverse).
fn near(a: &BBox, b: &BBox) -> bool {
    let inside = |outer: &BBox, inner: &BBox| {
        let (cx, cy) = ((inner.x0 + inner.x1) / 2.0, (inner.y0 + inner.y1) / 2.0);
        cx >= outer.x0 - TOLERANCE
            && cx <= outer.x1 + TOLERANCE
            && cy >= outer.y0 - TOLERANCE
            && cy <= outer.y1 + TOLERANCE
    };
    inside(a, b) || inside(b, a)
}

/// Intersection over union of two boxes.
fn overlap(a: &BBox, b: &BBox) -> f32 {
    let w = (a.x1.min(b.x1) - a.x0.max(b.x0)).max(0.0);
    let h = (a.y1.min(b.y1) - a.y0.max(b.y0)).max(0.0);
    let area = |r: &BBox| (r.x1 - r.x0).max(0.0) * (r.y1 - r.y0).max(0.0);
    let union = area(a) + area(b) - w * h;
    if union > 0.0 { w * h / union } else { 0.0 }
}

/// Character accuracy of OCR on the pages drawn at `dpi` against the text layer.
fn char_accuracy(bytes: &[u8], original: &ParsedDocument, pages: u32, dpi: u32, dir: &Path) -> anyhow::Result<()> {
    let copy = image_only_copy(bytes, pages, dpi, dir)?;
    let clock = Instant::now();
    let scanned = parse_file(&copy.path)?;
    let ocr_seconds = clock.elapsed().as_secs_f64();
    let (mut errors, mut length) = (0usize, 0usize);
    let mut worst: Vec<(f64, u32)> = Vec::new();
    for page in 1..=pages {
        let reference = page_text(original, page);
        let read = page_text(&scanned, page);
        let distance = edit_distance(&reference, &read);
        errors += distance;
        length += reference.len();
        if !reference.is_empty() {
            worst.push((1.0 - distance as f64 / reference.len() as f64, page));
        }
    }
    worst.sort_by(|a, b| a.0.total_cmp(&b.0));
    let accuracy = 1.0 - errors as f64 / length.max(1) as f64;
    println!(
        "character accuracy at {dpi} dpi: {accuracy:.4} ({errors} edits over {length} characters, {pages} pages); drawing {:.2} s/page, OCR parse {:.2} s/page",
        copy.seconds / f64::from(pages),
        ocr_seconds / f64::from(pages),
    );
    let lowest: Vec<String> = worst.iter().take(5).map(|(a, p)| format!("p{p} {a:.3}")).collect();
    println!("lowest pages: {}", lowest.join(", "));
    Ok(())
}

/// A page's lines in order, every run of whitespace one space, as characters.
fn page_text(document: &ParsedDocument, page: u32) -> Vec<char> {
    let text: Vec<&str> = document.lines.iter().filter(|l| l.page == page).map(|l| l.text.as_str()).collect();
    text.join(" ").split_whitespace().collect::<Vec<_>>().join(" ").chars().collect()
}

/// Levenshtein distance over characters (two rows).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The answer's values, `; `-joined (empty when nothing was found).
fn answer_text(output: &AskOutput) -> String {
    output.answer.items.iter().map(|i| i.value.to_string()).collect::<Vec<_>>().join("; ")
}

fn yes(value: bool) -> &'static str {
    if value { "yes" } else { "NO" }
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width { text.to_owned() } else { text.chars().take(width - 1).chain(['…']).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("same"), &chars("same")), 0);
    }

    #[test]
    fn a_cell_and_the_row_holding_it_are_near_but_the_next_row_is_not() {
        let row = BBox { x0: 50.0, y0: 700.0, x1: 550.0, y1: 712.0 };
        let cell = BBox { x0: 300.0, y0: 701.0, x1: 360.0, y1: 711.0 };
        let next_row = BBox { x0: 50.0, y0: 680.0, x1: 550.0, y1: 692.0 };
        assert!(near(&row, &cell) && near(&cell, &row));
        assert!(!near(&row, &next_row));
        assert!(overlap(&row, &cell) > 0.0 && overlap(&row, &next_row) == 0.0);
    }
}
