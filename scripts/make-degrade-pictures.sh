#!/usr/bin/env bash
# Draws each bundled degradation profile on the bundled walk: the page of
# `waymark render traces/city-walk.gpx --degrade PROFILE:1` (the degraded track over the dashed
# truth), screenshotted by headless chromium into docs/degrade/PROFILE.png.
# Usage: scripts/make-degrade-pictures.sh   (needs chromium; builds waymark when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2
[ -x .build/debug/waymark ] || swift build --product waymark >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p docs/degrade
for file in profiles/degrade/*.yaml; do
    profile=$(basename "$file" .yaml)
    .build/debug/waymark render traces/city-walk.gpx --degrade "$profile:1" -o "$work/$profile.html"
    chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --no-first-run \
        --user-data-dir="$work/profile" --virtual-time-budget=3000 --window-size=760,760 \
        --screenshot="docs/degrade/$profile.png" "file://$work/$profile.html" 2>/dev/null
    echo "make-degrade-pictures: docs/degrade/$profile.png" >&2
done
