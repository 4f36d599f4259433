#!/usr/bin/env bash
# Installs the Debian packages docintel needs besides the Rust toolchain:
# Tesseract with its English and French data (OCR of scanned PDF pages,
# issue 21) and Chromium (the web page's headless-browser test,
# crates/docintel-serve/tests/browser.rs, issue 20). Idempotent: does nothing when they are already installed.
# Run as root (CI) or with sudo on Debian/Ubuntu.
set -euo pipefail

packages=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-fra chromium)
missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ] && command -v tesseract >/dev/null && command -v chromium >/dev/null; then
    exit 0
fi
echo "setup: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v tesseract >/dev/null
command -v chromium >/dev/null
