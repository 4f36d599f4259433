#!/usr/bin/env python3
"""PyMuPDF baseline for `cargo xtask bench parse`.

For every PDF given on the command line, prints one JSON object per line:
{"file", "pages", "seconds", "chars", "lines": [text...], "toc": [[level, title, page]...],
 "peak_rss_kb", "error"}. Lines are `page.get_text("dict")` lines (span texts joined);
`seconds` covers opening, text extraction of every page and `doc.get_toc()`.
"""
import json
import resource
import sys
import time

import pymupdf


def bench(path):
    out = {"file": path, "pages": 0, "seconds": 0.0, "chars": 0, "lines": [], "toc": [], "error": None}
    start = time.perf_counter()
    try:
        doc = pymupdf.open(path)
        lines = []
        for page in doc:
            d = page.get_text("dict")
            for block in d.get("blocks", []):
                for line in block.get("lines", []):
                    text = "".join(span.get("text", "") for span in line.get("spans", []))
                    if text.strip():
                        lines.append(text)
        toc = doc.get_toc(simple=True)
        out["pages"] = doc.page_count
        out["seconds"] = time.perf_counter() - start
        out["lines"] = lines
        out["chars"] = sum(len(t) for t in lines)
        out["toc"] = [[int(level), str(title), int(page)] for level, title, page in toc]
    except Exception as e:  # noqa: BLE001 - report every failure as data
        out["seconds"] = time.perf_counter() - start
        out["error"] = f"{type(e).__name__}: {e}"
    out["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return out


def main():
    for path in sys.argv[1:]:
        print(json.dumps(bench(path), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
