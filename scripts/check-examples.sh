#!/usr/bin/env bash
# Builds and tests each example package as a user would after copying it out of the repository:
# into a temporary directory of its own, with WAYMARK_PATH pointing at this checkout. Proves the
# examples are self-contained (their traces are their own resources) and pass.
# Usage: scripts/check-examples.sh [EXAMPLE...]   (default: every package under Examples/)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
examples=("$@")
if [ ${#examples[@]} -eq 0 ]; then
    for dir in Examples/*/; do [ -f "$dir/Package.swift" ] && examples+=("$(basename "$dir")"); done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
for name in "${examples[@]}"; do
    echo "check-examples: $name, copied to $work/$name" >&2
    mkdir -p "$work/$name"
    # The package's own files, without a build folder a developer may have left.
    (cd "Examples/$name" && tar --exclude='./.build' -cf - .) | (cd "$work/$name" && tar -xf -)
    WAYMARK_PATH="$root" swift test --package-path "$work/$name"
done
