//! The committed tuning / validation split (`fixtures/eval/split.csv`) every
//! gold set is reported by.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The split file: `set,document,part`.
pub(crate) fn split_path() -> PathBuf {
    crate::tidy::project_root().join("fixtures/eval/split.csv")
}

/// Which part (`tuning` or `validation`) each document is in, by file name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Split {
    by_name: BTreeMap<String, String>,
}

impl Split {
    /// Reads the committed split.
    pub(crate) fn load() -> anyhow::Result<Split> {
        let path = split_path();
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let body: String = text.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
        let mut reader = csv::Reader::from_reader(body.as_bytes());
        let mut by_name = BTreeMap::new();
        for (i, record) in reader.records().enumerate() {
            let record = record.with_context(|| format!("{}: bad row {}", path.display(), i + 2))?;
            let (Some(document), Some(part)) = (record.get(1), record.get(2)) else {
                anyhow::bail!("{}: row {} needs set,document,part", path.display(), i + 2);
            };
            anyhow::ensure!(
                matches!(part, "tuning" | "validation"),
                "{}: row {}: part {part:?} is neither tuning nor validation",
                path.display(),
                i + 2
            );
            by_name.insert(file_name(document), part.to_owned());
        }
        Ok(Split { by_name })
    }

    /// Puts `document` in `part` (tests).
    #[cfg(test)]
    pub(crate) fn insert(&mut self, document: &str, part: &str) {
        self.by_name.insert(file_name(document), part.to_owned());
    }

    /// The part of a document (matched by file name); `unsplit` for a
    /// document the split does not list.
    pub(crate) fn part(&self, document: &str) -> String {
        self.by_name.get(&file_name(document)).cloned().unwrap_or_else(|| "unsplit".to_owned())
    }
}

fn file_name(path: &str) -> String {
    Path::new(path).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.to_owned())
}
