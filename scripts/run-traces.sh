#!/usr/bin/env bash
# The main job end to end on the bundled traces: builds Waymark, then for every traces/*.gpx
# prints its statistics and text view, and writes GeoJSON, GPX 1.1, an SVG picture and an HTML
# page into out/traces/; then
# replays traces/city-walk.gpx into the simulated app scripted by traces/commute.yaml, writing
# its audit log and the delivered locations (GeoJSON) beside them, and storing the run as a
# session in out/traces/waymark.sqlite, which it then lists, shows and exports (GPX, GeoJSON).
# Then it replays every other traces/*.yaml scenario (the wake-up services: significant changes,
# regions, visits, pushes, BGTaskScheduler, audio, uploads) on the trace its first line names,
# writing each audit log and the launches and wakes it caused. Every replay also draws its page
# (--report: the path coloured by what happened to each fix, the timeline, the summary), and so
# does the stored session (sessions export --format html); open out/traces/*.html in a browser.
# When ../shared/tools is present, the outputs are checked with check-geojson and check-gpx.
set -euo pipefail
cd "$(dirname "$0")/.."
# The build links libgps (for `waymark record`) and SQLite (the session store).
packages=()
pkg-config --exists libgps 2>/dev/null || packages+=(libgps-dev pkg-config)
[ -f /usr/include/sqlite3.h ] || packages+=(libsqlite3-dev)
if [ ${#packages[@]} -gt 0 ]; then
    echo "run-traces.sh: installing ${packages[*]}" >&2
    as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
swift build >&2
waymark=.build/debug/waymark
mkdir -p out/traces
for trace in traces/*.gpx; do
    name=$(basename "$trace" .gpx)
    echo "== $trace"
    "$waymark" render "$trace" --format text
    "$waymark" info "$trace" --json > "out/traces/$name.info.json"
    "$waymark" render "$trace" --format geojson -o "out/traces/$name.geojson"
    "$waymark" render "$trace" --format gpx -o "out/traces/$name.gpx"
    "$waymark" render "$trace" -o "out/traces/$name.svg"
    "$waymark" render "$trace" -o "out/traces/$name.html"
    echo
done
echo "== replay of traces/city-walk.gpx with traces/commute.yaml"
store=out/traces/waymark.sqlite
rm -f "$store" "$store-wal" "$store-shm"
"$waymark" replay traces/city-walk.gpx --scenario traces/commute.yaml --rate max --quiet --store "$store" \
    --audit out/traces/city-walk.replay.audit.ndjson --format geojson -o out/traces/city-walk.delivered.geojson \
    --report out/traces/city-walk.replay.html
for scenario in traces/*.yaml; do
    name=$(basename "$scenario" .yaml)
    [ "$name" = commute ] && continue
    # Each scenario names its trace in its first line: "# trace: NAME".
    trace="traces/$(head -n 1 "$scenario" | sed -n 's/^# trace: //p').gpx"
    echo
    echo "== replay of $trace with $scenario"
    mkdir -p "out/traces/$name.uploads"
    "$waymark" replay "$trace" --scenario "$scenario" --rate max --quiet --no-store \
        --upload-dir "out/traces/$name.uploads" --audit "out/traces/$name.audit.ndjson" \
        --format geojson -o "out/traces/$name.delivered.geojson" --report "out/traces/$name.replay.html"
    # The launches and wakes, and what caused them.
    grep -E '"from":"(notRunning|suspended)","to":"background"' "out/traces/$name.audit.ndjson" \
        | grep -v '"cause":"resumed"' | sed 's/^/  /' || true
done
echo
echo "== the session it stored"
"$waymark" sessions list --store "$store"
"$waymark" sessions show 1 --store "$store"
"$waymark" sessions export 1 --store "$store" --format gpx -o out/traces/city-walk.session.gpx
"$waymark" sessions export 1 --store "$store" --format geojson -o out/traces/city-walk.session.geojson
"$waymark" sessions export 1 --store "$store" --format html -o out/traces/city-walk.session.html
echo
echo "wrote $(ls out/traces | wc -l) files in out/traces/"
if [ -x ../shared/tools/check-geojson ]; then
    ../shared/tools/check-geojson --strict out/traces/*.geojson | tail -n 1
fi
if [ -x ../shared/tools/check-gpx ] && command -v xmllint >/dev/null 2>&1; then
    ../shared/tools/check-gpx out/traces/*.gpx | tail -n 1
fi
