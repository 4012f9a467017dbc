#!/usr/bin/env bash
# GPX → GeoJSON benchmark: synthetic 10 MB, 100 MB and 1 GB files (needs about 3 GB of disk in
# bench-out/), Waymark against gpsbabel and ogr2ogr in the same run, with wall time, MB/s, peak
# RSS and Waymark's speed-up, then a 1 MB file end to end. Not part of CI.
# Usage: scripts/bench.sh [--sizes 10,100,1000] [--install-peers]
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
for a in "$@"; do
    if [ "$a" = --install-peers ]; then
        as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
        as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gpsbabel gdal-bin >/dev/null
    else
        args+=("$a")
    fi
done
swift build -c release >&2
.build/release/waymark-bench --dir bench-out --waymark .build/release/waymark "${args[@]}"
