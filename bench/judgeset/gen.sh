#!/usr/bin/env bash
# Regenerates the OCR judge's labelled set (internal/judge/testdata/ocrset)
# from real applications on private Xvfb displays: xterm, rxvt-unicode,
# lxterminal, zenity, yad, mousepad, featherpad (Qt), galculator, and headless Chromium. Needs the
# packages of scripts/install-deps.sh. Takes about six minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=internal/judge/testdata/ocrset
for b in Xvfb xdotool xterm urxvt lxterminal zenity yad mousepad featherpad galculator chromium; do
  command -v "$b" >/dev/null || { echo "gen.sh: $b is missing: run scripts/install-deps.sh" >&2; exit 1; }
done
rm -rf "$out.new"
go run ./bench/judgeset -out "$out.new" "$@"
rm -rf "$out"
mv "$out.new" "$out"
du -sh "$out"
