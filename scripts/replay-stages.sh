#!/usr/bin/env bash
# Where `waymark replay`'s CPU goes, stage by stage: issue 25 asks that the simulated device cost
# no more per fix than reading the file. Runs `waymark replay FILE --rate max --no-store --quiet
# --format ndjson -o OUT` under `perf record -g` (4 kHz, call stacks by frame pointer) and gives
# each sample to the stage on its stack:
#
#   device     Simulation.run and its loop (Simulation.play): the source's hand-over of each
#              fix, the rules, the driver, the app's delivery, the audit events and the run's
#              reporters (on the device's thread)
#   hand-over  the part of `device` spent in the replay source: taking each laid-out fix from
#              the laying-out thread and boxing it (its innermost Waymark frame is the source's)
#   read       the play's reading pass (ReplayPass.produce: the GPX reader, on its thread)
#   layout     laying the play out (LaidOutPass.lay: timeline, speed and course, on its thread)
#   ndjson     the NDJSON line thread (LineQueue.run: formatting and writing the lines)
#   census     the census, the whole file read once before the play (ReplayCensus, in halves)
#   other      the rest: start-up, scheduling, the kernel outside these stacks
#
# and prints the samples summed over the runs, with the device's cost against the reading's.
# Needs `perf` (Debian: linux-perf) with permission to sample (root, or
# kernel.perf_event_paranoid ≤ 1). Writes only into a private temporary directory.
#
# Usage: scripts/replay-stages.sh [--runs N] [--bin WAYMARK] FILE [FILE…]
#   --runs N     runs per file, summed (default 3: one run varies by ±15 % on a shared VM)
#   --bin PATH   the waymark binary (default .build/release/waymark); give two or more --bin to
#                compare builds (a copy of the previous build's, say), run alternately on each file
# The walks of docs/benchmarks.md (500 k points in each of nine writers' layouts) are the files
# `waymark-bench replay-cli --dir DIR` generates: DIR/replay-cli-LAYOUT-500000.gpx.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

runs=3
bins=()
files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs)
            [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "replay-stages: --runs needs a positive whole number" >&2; exit 64; }
            runs=$2; shift 2 ;;
        --bin)
            [ -n "${2:-}" ] || { echo "replay-stages: --bin needs the path of a waymark binary" >&2; exit 64; }
            bins+=("$2"); shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "replay-stages: unknown option $1 (see --help)" >&2; exit 64 ;;
        *) files+=("$1"); shift ;;
    esac
done
[ ${#files[@]} -gt 0 ] || { echo "replay-stages: give a GPX file to replay (see --help)" >&2; exit 64; }
[ ${#bins[@]} -gt 0 ] || bins=("$root/.build/release/waymark")
command -v perf > /dev/null || { echo "replay-stages: needs perf (apt-get install -y linux-perf)" >&2; exit 69; }
for b in "${bins[@]}"; do [ -x "$b" ] || { echo "replay-stages: no waymark binary at $b (swift build -c release --product waymark)" >&2; exit 66; }; done
for f in "${files[@]}"; do [ -r "$f" ] || { echo "replay-stages: cannot read $f" >&2; exit 66; }; done

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-stages.XXXXXX")
trap 'rm -rf "$work"' EXIT

# One run: the samples of each stage, as "total device read layout ndjson census other".
stages() {  # binary, file
    perf record -q -o "$work/perf.data" -F 4000 -g "$1" replay "$2" --rate max --no-store --quiet \
        --format ndjson -o "$work/out.ndjson" > /dev/null 2> "$work/perf.err" \
        || { cat "$work/perf.err" >&2; echo "replay-stages: $1 replay $2 failed under perf (its message, or perf's, above; perf needs permission to sample: see --help)" >&2; exit 70; }
    perf script -i "$work/perf.data" -F tid,ip,sym 2> "$work/script.err" > "$work/script.txt" \
        || { cat "$work/script.err" >&2; echo "replay-stages: perf script could not read the samples (its message above)" >&2; exit 70; }
    awk '
        BEGIN { RS = "" }
        { total++ }
        /SimulationC3run_|SimulationC4play/ {
            device++
            # The hand-over: the innermost Waymark frame is in the replay source.
            n = split($0, frames, "\n")
            for (i = 2; i <= n; i++) {
                split(frames[i], f, " ")
                if (f[2] ~ /^\$s(7Waymark|10WaymarkCLI)/) {
                    # A function of the source types themselves (its name begins with the type):
                    # not one that only names them, as the run loop specialized for the source.
                    # (StoppableSource: the command line wrapper of the source, in builds before RunStop)
                    if (f[2] ~ /^\$s(7Waymark(21StreamingReplaySource|11LaidOutPass|14ReplayTimeline)|10WaymarkCLI15StoppableSource)/) handover++
                    break
                }
            }
            next
        }
        /ReplayPassC7produce/ { read++; next }
        /LaidOutPassC3lay/ { layout++; next }
        /LineQueueC3run/ { ndjson++; next }
        /ReplayCensus|Halves/ { census++; next }
        { other++ }
        END { printf "%d %d %d %d %d %d %d %d\n", total, device, read, layout, ndjson, census, other, handover }' "$work/script.txt"
}

printf '%-44s %-20s %7s %7s %9s %7s %7s %7s %7s %7s %12s %12s\n' file build samples device hand-over read layout ndjson census other device/read rest/read
for f in "${files[@]}"; do
    # Sums kept by the build's place on the command line: two builds may share a file name.
    for i in "${!bins[@]}"; do : > "$work/$i.sums"; done
    for _ in $(seq "$runs"); do
        for i in "${!bins[@]}"; do stages "${bins[$i]}" "$f" >> "$work/$i.sums"; done
    done
    for i in "${!bins[@]}"; do
        b=${bins[$i]}
        label=$(basename "$b")
        # Two builds of one name are told apart by their place on the command line.
        same=0
        for other in "${bins[@]}"; do [ "$(basename "$other")" != "$label" ] || same=$((same + 1)); done
        [ "$same" -eq 1 ] || label="$((i + 1)):$label"
        awk -v f="$(basename "$f")" -v b="$label" '
            { for (i = 1; i <= 8; i++) s[i] += $i }
            END {
                printf "%-44s %-20s %7d %7d %9d %7d %7d %7d %7d %7d %11.2f× %11.2f×\n", substr(f, 1, 44), substr(b, 1, 20),
                    s[1], s[2], s[8], s[3], s[4], s[5], s[6], s[7], (s[3] > 0 ? s[2] / s[3] : 0),
                    (s[3] > 0 ? (s[2] - s[8]) / s[3] : 0)
            }' "$work/$i.sums"
    done
done
echo "samples at 4 kHz summed over $runs run(s) per file and build; device/read: the device's samples over the play's"
echo "reading pass's; hand-over: the device's samples in the replay source (taking each laid-out fix from the"
echo "laying-out thread, boxing it); rest/read: the device without the hand-over, over the reading pass"
