#!/usr/bin/env bash
# Builds the Waymark library's DocC catalog (Sources/Waymark/Waymark.docc) with the toolchain's
# own docc and fails on any warning: a symbol link that leads nowhere, an undocumented
# parameter, a broken article reference. No package dependency: `swift package
# dump-symbol-graph` extracts the symbol graphs from the modules the last `swift build` (or
# `swift test`) left in .build, and `docc convert` builds the archive into a private temporary
# directory that is removed at the end. Takes about 10 s after a build.
# Usage: scripts/check-docs.sh [--keep DIR]   (--keep writes the archive to DIR/Waymark.doccarchive)
set -euo pipefail
cd "$(dirname "$0")/.."

keep=""
if [ "${1:-}" = --keep ]; then keep="${2:?--keep needs a directory}"; fi

docc=$(command -v docc || true)
if [ -z "$docc" ]; then
    # The toolchain ships docc beside swift (/opt/swift/usr/bin/docc).
    docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
fi
[ -x "$docc" ] || { echo "check-docs: no docc beside $(command -v swift)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Extension blocks give `Duration.maximumSeconds` and the other extensions of the standard
# library's types a page (Waymark/Swift/Duration), so that links to them resolve.
if ! swift package dump-symbol-graph --emit-extension-block-symbols >"$work/dump.log" 2>&1; then
    cat "$work/dump.log" >&2
    echo "check-docs: swift package dump-symbol-graph failed" >&2
    exit 1
fi
graphs=$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -n 1)
[ -f "$graphs/Waymark.symbols.json" ] || { cat "$work/dump.log" >&2; echo "check-docs: no Waymark.symbols.json" >&2; exit 1; }
mkdir "$work/symbols"
cp "$graphs"/Waymark.symbols.json "$graphs"/Waymark@*.symbols.json "$work/symbols/"

status=0
"$docc" convert Sources/Waymark/Waymark.docc \
    --additional-symbol-graph-dir "$work/symbols" \
    --fallback-display-name Waymark --fallback-bundle-identifier waymark.Waymark \
    --output-path "$work/Waymark.doccarchive" \
    --warnings-as-errors >"$work/docc.log" 2>&1 || status=$?
problems=$(grep -cE '^(warning|error):' "$work/docc.log" || true)
if [ "$status" != 0 ] || [ "$problems" != 0 ]; then
    cat "$work/docc.log" >&2
    echo "check-docs: the DocC catalog has $problems warning(s) or error(s) (docc exit $status)" >&2
    exit 1
fi
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    rm -rf "$keep/Waymark.doccarchive"
    cp -R "$work/Waymark.doccarchive" "$keep/"
fi
articles=$(find Sources/Waymark/Waymark.docc -name '*.md' | wc -l)
echo "check-docs: Sources/Waymark/Waymark.docc ($articles pages) builds with docc: 0 warnings"
