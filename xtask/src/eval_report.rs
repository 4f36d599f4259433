//! The split report of `cargo xtask eval --shared DIR`: every set's figures
//! on its tuning and its validation documents side by side, the aggregates
//! the reader issue is judged by, refusal precision and recall, and the
//! confidence table (how often an answer at a given confidence is right).

use std::collections::BTreeMap;

use crate::eval_sets::GoldRow;

/// The parts, in print order.
const PARTS: [&str; 2] = ["tuning", "validation"];

/// Sets whose questions are lookups of one value (the reader issue's
/// "repository lookup sets"); FinanceBench counts its direct lookups only
/// (see [`crate::eval_sets::financebench`]).
const LOOKUP_SETS: [&str; 5] = ["nist", "invoices", "financebench_lookup", "cuad", "fr_insurance"];

fn share(n: usize, of: usize) -> String {
    if of == 0 { "-".to_owned() } else { format!("{:.3} ({n}/{of})", n as f64 / of as f64) }
}

/// Figures of a group of rows.
#[derive(Debug, Default, Clone, Copy)]
struct Figures {
    n: usize,
    scored: usize,
    correct: usize,
    answerable_scored: usize,
    answerable_correct: usize,
    paged: usize,
    page_hits: usize,
    refused: usize,
    refused_right: usize,
    must_refuse: usize,
    verified: usize,
}

impl Figures {
    fn of<'a>(rows: impl IntoIterator<Item = &'a GoldRow>) -> Figures {
        let mut f = Figures::default();
        for r in rows {
            f.n += 1;
            if let Some(ok) = r.correct {
                f.scored += 1;
                f.correct += usize::from(ok);
                if !r.should_refuse {
                    f.answerable_scored += 1;
                    f.answerable_correct += usize::from(ok);
                }
            }
            if let Some(hit) = r.page_hit {
                f.paged += 1;
                f.page_hits += usize::from(hit);
            }
            f.refused += usize::from(r.refused);
            f.refused_right += usize::from(r.refused && r.should_refuse);
            f.must_refuse += usize::from(r.should_refuse);
            f.verified += usize::from(r.citations_verified);
        }
        f
    }

    fn line(&self) -> String {
        format!(
            "{:>4}  {:<18} {:<18} {:<16} {:<16}",
            self.n,
            share(self.answerable_correct, self.answerable_scored),
            share(self.page_hits, self.paged),
            share(self.refused_right, self.refused),
            share(self.refused_right, self.must_refuse),
        )
    }
}

fn header(title: &str) {
    println!(
        "{title:<22} {:<10} {:>4}  {:<18} {:<18} {:<16} {:<16}",
        "part", "n", "answers right", "cited page", "refusal prec.", "refusal recall"
    );
}

/// Which rows an aggregate takes.
type Keep = fn(&GoldRow) -> bool;

/// Prints the split report.
pub(crate) fn print(rows: &[GoldRow]) {
    let mut sets: Vec<&str> = Vec::new();
    for r in rows {
        if !sets.contains(&r.set) {
            sets.push(r.set);
        }
    }
    println!();
    header("set");
    for set in &sets {
        for part in PARTS.iter().copied().chain(rows.iter().any(|r| r.part == "unsplit").then_some("unsplit")) {
            let of: Vec<&GoldRow> = rows.iter().filter(|r| r.set == *set && r.part == part).collect();
            if of.is_empty() {
                continue;
            }
            println!("{set:<22} {part:<10} {}", Figures::of(of).line());
        }
    }
    println!();
    header("aggregate");
    let groups: [(&str, Keep); 4] = [
        ("lookup sets", |r| LOOKUP_SETS.contains(&r.set)),
        ("dev sets", |r| !LOOKUP_SETS.contains(&r.set) && !r.set.starts_with("mmlongbench") && r.set != "financebench"),
        ("mmlongbench text/table", |r| r.set == "mmlongbench"),
        ("all (no vision)", |r| r.set != "mmlongbench_vision" && r.set != "financebench_lookup"),
    ];
    for (name, keep) in &groups {
        for part in PARTS {
            let of: Vec<&GoldRow> = rows.iter().filter(|r| keep(r) && r.part == part).collect();
            if !of.is_empty() {
                println!("{name:<22} {part:<10} {}", Figures::of(of).line());
            }
        }
    }
    println!();
    println!("confidence table (answered questions, all sets but vision): right / answered per bucket");
    let buckets: [(f64, f64); 5] = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)];
    print!("{:<12}", "part");
    for (lo, hi) in buckets {
        print!(" {:<18}", format!("[{lo:.1}, {:.1})", hi.min(1.0)));
    }
    println!();
    for part in PARTS {
        let mut cells: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.part == part && !r.refused && r.correct.is_some()) {
            if r.set == "mmlongbench_vision" || r.set == "financebench_lookup" {
                continue;
            }
            let b = buckets.iter().position(|(lo, hi)| r.confidence >= *lo && r.confidence < *hi).unwrap_or(0);
            let cell = cells.entry(b).or_default();
            cell.1 += 1;
            cell.0 += usize::from(r.correct == Some(true));
        }
        print!("{part:<12}");
        for b in 0..buckets.len() {
            let (ok, of) = cells.get(&b).copied().unwrap_or_default();
            print!(" {:<18}", share(ok, of));
        }
        println!();
    }
}
