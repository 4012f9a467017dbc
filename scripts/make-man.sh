#!/usr/bin/env bash
# Generates waymark's manual pages from the commands themselves (swift-argument-parser's
# generate-manual plugin: each page is the command's --help, with its discussion and options) and
# installs them.
# Usage: scripts/make-man.sh [MANDIR]   (default: out/man; e.g. /usr/local/share/man)
# The pages land in MANDIR/man1: waymark.1, and waymark.replay.1, waymark.sessions.export.1 and
# so on for each subcommand; `man waymark.replay` (or `man -l FILE`) reads them. The plugin builds
# the tool in release mode first (minutes on a small machine, the first time).
set -euo pipefail
cd "$(dirname "$0")/.."
mandir=${1:-out/man}
swift package plugin generate-manual --multi-page >&2
pages=.build/plugins/GenerateManual/outputs/WaymarkTool
ls "$pages"/*.1 >/dev/null
mkdir -p "$mandir/man1"
cp "$pages"/*.1 "$mandir/man1/"
count=$(ls "$pages"/*.1 | wc -l)
echo "make-man: $count page(s) in $mandir/man1 (man -l $mandir/man1/waymark.1)" >&2
