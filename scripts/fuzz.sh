#!/usr/bin/env bash
# Fuzzes the XML tokenizer and GPX reader with libFuzzer and AddressSanitizer (seeds: the test
# fixtures, and a few points of each common logger layout in Tests/WaymarkTests/Fixtures/fuzz).
# Usage: scripts/fuzz.sh [SECONDS=60]. Any crash, hang or sanitizer
# report fails the run and leaves its input in .build-fuzz/ (crash-*, timeout-*, oom-*).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
# The libFuzzer runtime links with lld (gold fails on the sanitizer objects here).
swift build -c release --product waymark-fuzz --scratch-path .build-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
cp Tests/WaymarkTests/Fixtures/gpx/*.gpx Tests/WaymarkTests/Fixtures/bad/*.gpx \
    Tests/WaymarkTests/Fixtures/xml/*/*.xml Tests/WaymarkTests/Fixtures/fuzz/*.gpx traces/*.gpx "$seeds"/
echo "fuzz.sh: fuzzing the GPX reader for ${seconds}s" >&2
log=.build-fuzz/fuzz.log
if ! SWIFT_BACKTRACE=enable=no .build-fuzz/release/waymark-fuzz "$seeds" \
    -max_total_time="$seconds" -detect_leaks=0 -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=.build-fuzz/ -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz.sh: the fuzzer found a failing input; it is in .build-fuzz/ (crash-*, timeout-* or oom-*)" >&2
    exit 1
fi
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
echo "fuzz.sh: ${runs} inputs in ${seconds}s, no crash, hang or sanitizer report" >&2
