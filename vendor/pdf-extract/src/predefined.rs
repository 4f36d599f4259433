//! docintel: the predefined CMaps of CJK fonts (code to CID) and the CID-to-Unicode tables of
//! their character collections, embedded (see `cmaps/make_cmaps.py`; Adobe CMap resources,
//! BSD-3-Clause, via pdfminer.six). A Type0 font whose `/Encoding` names one of them
//! (`90ms-RKSJ-H`, `GBKp-EUC-H`, `H`, ...) panicked with "unsupported encoding" before.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex, OnceLock};

use adobe_cmap_parser::{ByteMapping, CIDRange, CodeRange};

mod files {
    include!("predefined_files.rs");
}

fn text_of(name: &str) -> Option<String> {
    let (_, bytes) = files::FILES.iter().find(|(n, _)| *n == name)?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(*bytes).read_to_string(&mut text).ok()?;
    Some(text)
}

fn hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s, 16).ok()
}

/// The code-to-CID mapping of a predefined CMap (a vertical one: its own vertical forms over
/// its horizontal twin's); `None` for a name not embedded.
pub(crate) fn byte_mapping(name: &str) -> Option<ByteMapping> {
    let text = text_of(name)?;
    let mut mapping = ByteMapping { codespace: Vec::new(), cid: Vec::new() };
    if let Some(twin) = text.lines().next().and_then(|l| l.strip_prefix("b ")) {
        // The vertical forms first: the first matching range wins.
        let base = byte_mapping(twin)?;
        let mut overrides = byte_mapping_lines(&text)?;
        overrides.cid.extend(base.cid);
        overrides.codespace = base.codespace;
        return Some(overrides);
    }
    let parsed = byte_mapping_lines(&text)?;
    mapping.codespace = parsed.codespace;
    mapping.cid = parsed.cid;
    Some(mapping)
}

fn byte_mapping_lines(text: &str) -> Option<ByteMapping> {
    let mut mapping = ByteMapping { codespace: Vec::new(), cid: Vec::new() };
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["c", w, lo, hi] => {
                let width: u32 = w.parse().ok()?;
                let shift = 8 * (width - 1);
                let (lo, hi) = (hex(lo)?, hex(hi)?);
                let low_tail = 0;
                let high_tail = if shift == 0 { 0 } else { (1u32 << shift) - 1 };
                mapping.codespace.push(CodeRange { width, start: (lo << shift) | low_tail, end: (hi << shift) | high_tail });
            }
            ["r", lo, hi, cid] => {
                mapping.cid.push(CIDRange { src_code_lo: hex(lo)?, src_code_hi: hex(hi)?, dst_CID_lo: cid.parse().ok()? });
            }
            _ => {}
        }
    }
    Some(mapping)
}

/// The CID-to-Unicode table of the character collection `Adobe-<ordering>` (`Japan1`, `GB1`,
/// `CNS1`, `Korea1`), with the vertical forms' code points when `vertical`, built once per
/// process; `None` for another ordering.
pub(crate) fn cid_to_unicode(ordering: &str, vertical: bool) -> Option<Arc<HashMap<u32, String>>> {
    let horizontal = table(&format!("to-unicode-Adobe-{ordering}"))?;
    if !vertical {
        return Some(horizontal);
    }
    let forms = table(&format!("to-unicode-Adobe-{ordering}-V"))?;
    let mut merged = (*horizontal).clone();
    merged.extend(forms.iter().map(|(k, v)| (*k, v.clone())));
    Some(Arc::new(merged))
}

fn table(name: &str) -> Option<Arc<HashMap<u32, String>>> {
    static TABLES: OnceLock<Mutex<HashMap<String, Option<Arc<HashMap<u32, String>>>>>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut tables = tables.lock().unwrap_or_else(|e| e.into_inner());
    tables
        .entry(name.to_owned())
        .or_insert_with(|| {
            let text = text_of(name)?;
            let mut map = HashMap::new();
            for line in text.lines() {
                let f: Vec<&str> = line.split(' ').collect();
                match f.as_slice() {
                    ["u", cid, count, cp] => {
                        let (cid, count, cp): (u32, u32, u32) = (cid.parse().ok()?, count.parse().ok()?, hex(cp)?);
                        for i in 0..count {
                            if let Some(c) = char::from_u32(cp + i) {
                                map.insert(cid + i, c.to_string());
                            }
                        }
                    }
                    ["s", cid, cps @ ..] => {
                        let text: String = cps.iter().filter_map(|c| hex(c).and_then(char::from_u32)).collect();
                        map.insert(cid.parse().ok()?, text);
                    }
                    _ => {}
                }
            }
            Some(Arc::new(map))
        })
        .clone()
}
