//! The `tesseract` program: found and asked for its languages once per document, run on
//! one page image (PGM on standard input, TSV on standard output, with a time limit), and
//! its word rows grouped into lines.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The languages asked for when installed (the project's documents are English and French).
const WANTED_LANGUAGES: [&str; 2] = ["eng", "fra"];

/// A tesseract that answered `--list-langs`.
#[derive(Debug, Clone)]
pub(crate) struct Tesseract {
    program: PathBuf,
    /// `-l` argument, e.g. `eng+fra`.
    pub(crate) languages: String,
    /// Whether the orientation and script model (`osd`) is installed (`--psm 1` then).
    osd: bool,
}

/// One word row of the TSV output (level 5), pixel box and confidence (0 to 100).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    /// (block, paragraph, line) numbers: the words of one line share them.
    pub(crate) line_key: (u32, u32, u32),
    pub(crate) left: f64,
    pub(crate) top: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) confidence: f32,
    pub(crate) text: String,
}

/// Asks `program` (default `tesseract` on `PATH`) for its languages. `Err` says why it
/// cannot be used (not found, not runnable, no language data).
pub(crate) fn find(program: Option<&Path>) -> Result<Tesseract, String> {
    let program = program.map_or_else(|| PathBuf::from("tesseract"), Path::to_path_buf);
    let output = Command::new(&program)
        .arg("--list-langs")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{} cannot be run ({e})", program.display()))?;
    if !output.status.success() {
        return Err(format!("{} --list-langs failed ({})", program.display(), output.status));
    }
    // Tesseract 4 printed the list on stderr, 5 on stdout.
    let listing = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let installed: Vec<&str> =
        listing.lines().map(str::trim).filter(|l| !l.is_empty() && !l.contains(' ') && !l.ends_with(':')).collect();
    let mut languages: Vec<&str> = WANTED_LANGUAGES.iter().copied().filter(|l| installed.contains(l)).collect();
    if languages.is_empty() {
        languages.extend(installed.iter().copied().filter(|&l| l != "osd").take(1));
    }
    if languages.is_empty() {
        return Err(format!("{} has no language data installed", program.display()));
    }
    Ok(Tesseract { program, languages: languages.join("+"), osd: installed.contains(&"osd") })
}

impl Tesseract {
    /// Runs tesseract on one PGM image drawn at `dpi`; its word rows. Killed after `limit`.
    pub(crate) fn words(&self, pgm: &[u8], dpi: f32, limit: Duration) -> Result<Vec<Word>, String> {
        // Page segmentation: automatic with orientation and script detection when `osd` is
        // installed (a page scanned sideways), else automatic without it.
        let psm = if self.osd { "1" } else { "3" };
        let mut child = Command::new(&self.program)
            .args(["stdin", "stdout", "-l", &self.languages, "--psm", psm, "--oem", "1"])
            .args(["--dpi", &format!("{}", dpi.round() as u32), "tsv"])
            // One thread per tesseract: the pages already run one per core.
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{} cannot be run ({e})", self.program.display()))?;
        let (stdout, stderr) = exchange(&mut child, pgm, limit)?;
        let status = child.wait().map_err(|e| format!("tesseract: {e}"))?;
        if !status.success() {
            let said = String::from_utf8_lossy(&stderr);
            let said = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            return Err(format!(
                "tesseract failed ({status}){}",
                if said.is_empty() { String::new() } else { format!(": {said}") }
            ));
        }
        Ok(parse_tsv(&String::from_utf8_lossy(&stdout)))
    }
}

/// Feeds `input` to the child and reads its outputs, killing it past `limit`.
fn exchange(child: &mut Child, input: &[u8], limit: Duration) -> Result<(Vec<u8>, Vec<u8>), String> {
    let started = Instant::now();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            if let Some(mut pipe) = stdin.take() {
                // A tesseract that stops reading (bad image) closes the pipe: its status says why.
                let _ = pipe.write_all(input);
            }
        });
        let out = scope.spawn(move || {
            let mut buf = Vec::new();
            if let Some(pipe) = stdout.as_mut() {
                let _ = pipe.read_to_end(&mut buf);
            }
            buf
        });
        let err = scope.spawn(move || {
            let mut buf = Vec::new();
            if let Some(pipe) = stderr.as_mut() {
                let _ = pipe.take(64 * 1024).read_to_end(&mut buf);
            }
            buf
        });
        let mut timed_out = false;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if started.elapsed() > limit => {
                    let _ = child.kill();
                    timed_out = true;
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("tesseract: {e}")),
            }
        }
        let _ = writer.join();
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        if timed_out {
            let _ = child.wait();
            return Err(format!("tesseract took more than {} s and was stopped", limit.as_secs()));
        }
        Ok((stdout, stderr))
    })
}

/// The word rows (level 5, with text) of tesseract's TSV output.
pub(crate) fn parse_tsv(tsv: &str) -> Vec<Word> {
    let mut words = Vec::new();
    for row in tsv.lines().skip(1) {
        let cells: Vec<&str> = row.split('\t').collect();
        if cells.len() < 12 || cells[0] != "5" {
            continue;
        }
        let number = |i: usize| cells[i].trim().parse::<f64>().ok();
        let (Some(block), Some(par), Some(line)) = (number(2), number(3), number(4)) else { continue };
        let (Some(left), Some(top), Some(width), Some(height), Some(conf)) =
            (number(6), number(7), number(8), number(9), number(10))
        else {
            continue;
        };
        let text = cells[11..].join("\t").trim().to_string();
        if text.is_empty() || conf < 0.0 {
            continue;
        }
        words.push(Word {
            line_key: (block as u32, par as u32, line as u32),
            left,
            top,
            width,
            height,
            confidence: conf as f32,
            text,
        });
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_rows_are_read_and_other_levels_skipped() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   1\t1\t0\t0\t0\t0\t0\t0\t2480\t3508\t-1\t\n\
                   4\t1\t1\t1\t1\t0\t100\t200\t300\t40\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t100\t200\t120\t40\t96.5\tTotal\n\
                   5\t1\t1\t1\t1\t2\t240\t200\t160\t40\t91\t$4.11\n\
                   5\t1\t1\t1\t2\t1\t100\t260\t10\t40\t-1\t \n";
        let words = parse_tsv(tsv);
        assert_eq!(words.len(), 2, "{words:?}");
        assert_eq!(words[1].text, "$4.11");
        assert_eq!(words[1].line_key, (1, 1, 1));
        assert!((words[0].confidence - 96.5).abs() < 1e-3);
    }
}
