#!/usr/bin/env bash
# Fuzzes Waymark with libFuzzer and AddressSanitizer, one target (mode) after another:
#   gpx       the XML tokenizer and the GPX reader (half the time)
#   writers   read → write GPX and GeoJSON, and repair
#   scenario  scenario files, and a simulation driven by each one that reads
#   gpsd      gpsd's stream: lines, libgps's parser, one fix per epoch, locations
#   nmea      the trace readers of untrusted files: TraceFormat's detection, NMEA logs and
#             gpsd JSON captures, read whole and in small pieces (the same events either way)
#   activity  the activity formats' readers (TCX, KML, GeoJSON, FIT, CSV), strict and lenient,
#             whole and in pieces, and TraceFormat's detection of them
# Inputs go up to 1 MB, and each has a time limit of 5 s: work quadratic in the input shows
# as a timeout. Seeds: the test fixtures, a few points of each common logger layout
# (Tests/WaymarkTests/Fixtures/fuzz), the scenarios, and gpsd's regression outputs when
# ../shared/corpus is beside the project (read there, never copied in).
#
# Usage: scripts/fuzz.sh [SECONDS=60] [MODE...]. SECONDS is the total; with no MODE, all six
# share it (gpx half, the others a tenth each). A longer run: scripts/fuzz.sh 3600.
# Any crash, hang, timeout or sanitizer report fails the run and leaves its input in
# .build-fuzz/ (crash-*, timeout-*, oom-*), named by mode.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then modes=(gpx writers scenario gpsd nmea activity); fi
# The libFuzzer runtime links with lld (gold fails on the sanitizer objects here).
swift build -c release --product waymark-fuzz --scratch-path .build-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seed() {  # seed MODE: fills $work/MODE with the mode's seeds
    local dir="$work/$1"
    mkdir -p "$dir"
    case "$1" in
    gpx | writers)
        cp Tests/WaymarkTests/Fixtures/gpx/*.gpx Tests/WaymarkTests/Fixtures/bad/*.gpx \
            Tests/WaymarkTests/Fixtures/xml/*/*.xml Tests/WaymarkTests/Fixtures/fuzz/*.gpx traces/*.gpx "$dir"/
        ;;
    scenario)
        cp traces/*.yaml Tests/WaymarkTests/Fixtures/scenarios/*.yaml "$dir"/
        ;;
    gpsd)
        cp Tests/WaymarkTests/Fixtures/fuzz/gpsd/* "$dir"/
        local corpus=../shared/corpus/gpsd/release-3.22
        if [ -d "$corpus" ]; then
            for f in "$corpus"/*.chk; do cp "$f" "$dir/$(basename "$f").json"; done
        fi
        ;;
    activity)
        cp Tests/WaymarkTests/Fixtures/activity/* "$dir"/
        ;;
    nmea)
        cp Tests/WaymarkTests/Fixtures/nmea/*.nmea Tests/WaymarkTests/Fixtures/fuzz/gpsd/* "$dir"/
        local corpus=../shared/corpus/gpsd/release-3.22
        if [ -d "$corpus" ]; then
            cp "$corpus"/*.log "$dir"/
        fi
        ;;
    esac
}

share() {  # share MODE: its seconds of the total
    if [ ${#modes[@]} -eq 1 ]; then echo "$seconds"; return; fi
    case "$1" in
    gpx) echo $(((seconds + 1) / 2)) ;;
    *) local s=$((seconds / 10)); echo $((s > 0 ? s : 1)) ;;
    esac
}

for mode in "${modes[@]}"; do
    case "$mode" in gpx | writers | scenario | gpsd | nmea | activity) ;; *)
        echo "fuzz.sh: unknown mode $mode (gpx, writers, scenario, gpsd, nmea, activity)" >&2
        exit 64
        ;;
    esac
    seed "$mode"
    time_share=$(share "$mode")
    echo "fuzz.sh: fuzzing $mode for ${time_share}s" >&2
    log=.build-fuzz/fuzz-$mode.log
    if ! WAYMARK_FUZZ_TARGET=$mode TMPDIR="$work" SWIFT_BACKTRACE=enable=no .build-fuzz/release/waymark-fuzz "$work/$mode" \
        -max_total_time="$time_share" -detect_leaks=0 -max_len=1048576 -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix=.build-fuzz/"$mode"- -print_final_stats=1 >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fuzz.sh: the $mode fuzzer found a failing input; it is in .build-fuzz/ ($mode-crash-*, -timeout-* or -oom-*)" >&2
        exit 1
    fi
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    echo "fuzz.sh: $mode: ${runs} inputs in ${time_share}s, no crash, hang or sanitizer report" >&2
done
