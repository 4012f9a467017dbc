#!/usr/bin/env bash
# The whole test suite, from a fresh clone on Debian 12 with Swift 6.3:
#   1. installs what the build and the tests use when it is missing: libgps-dev and
#      libsqlite3-dev (the build links libgps and SQLite), gpsd and gpsd-clients (gpsfake replays
#      receiver logs into a private gpsd), xmllint, the sqlite3 shell (tests read the store as a
#      user would), GeographicLib for Python, chromium (headless, it screenshots render's SVG), gdal-bin
#      (ogrinfo reads render's GeoJSON for GIS), gpsbabel (a second reader of GPX), libjs-leaflet (a web map of the GeoJSON), python3-gps
#      and tmux (serve is tested with gpsd's Python client and with cgps, read in a tmux pane),
#      postgresql and postgresql-15-postgis-3 (the PostGIS store, in a private cluster),
#   2. builds the package (the CLI tests run the built `waymark`),
#   3. fuzzes the GPX reader, the writers, scenario files, gpsd's stream, the NMEA and gpsd
#      capture readers and the activity formats' readers (TCX, KML, GeoJSON, FIT, CSV) with
#      libFuzzer for WAYMARK_FUZZ_SECONDS in all (default 60; 0 skips;
#      scripts/fuzz.sh says how it is shared),
#   4. runs `swift test`, watched for a hang (WAYMARK_TEST_HANG_MINUTES, below),
#   5. with no extra arguments: checks that the DocC catalog builds without a warning
#      (scripts/check-docs.sh) and that the libraries use no Linux-only API outside #if guards
#      (scripts/check-portable.sh, docs/portability.md), then builds and tests the example
#      packages (Examples/RunTracker, Examples/iOSApps) copied out of the repository
#      (scripts/check-examples.sh), each depending on this checkout through WAYMARK_PATH.
# Tests that need ../shared (the third-party corpus and checkers) say so and are skipped when it
# is absent. Usage: scripts/test.sh [--busy] [extra swift test arguments, e.g. --filter CorpusTests]
#
# --busy runs all of it after the build while stress-ng keeps every core busy (`stress-ng --cpu
# N`, N = the cores; installed when missing, ended with the script): the suite must pass on a
# loaded machine too (docs/testing.md, "A busy machine"). Without it, this is CI's command.
set -euo pipefail
cd "$(dirname "$0")/.."

busy=0
if [ "${1:-}" = "--busy" ]; then
    busy=1
    shift
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

packages=()
pkg-config --exists libgps 2>/dev/null || packages+=(libgps-dev pkg-config)
[ -f /usr/include/sqlite3.h ] || packages+=(libsqlite3-dev)
command -v sqlite3 >/dev/null 2>&1 || packages+=(sqlite3)
command -v gpsfake >/dev/null 2>&1 || packages+=(gpsd gpsd-clients python3-gps)
command -v gpxlogger >/dev/null 2>&1 || packages+=(gpsd-clients)  # serve's tests: gpspipe, gpxlogger, cgps
[ -f /usr/lib/python3/dist-packages/gps/__init__.py ] || packages+=(python3-gps)  # serve: gpsd's Python client
command -v tmux >/dev/null 2>&1 || packages+=(tmux)        # serve: cgps is read from a private tmux's pane
command -v xmllint >/dev/null 2>&1 || packages+=(libxml2-utils)
command -v bc >/dev/null 2>&1 || packages+=(bc)            # ../shared/tools/gpsfake_replay.sh
command -v ss >/dev/null 2>&1 || packages+=(iproute2)      # the same
command -v python3 >/dev/null 2>&1 || packages+=(python3 python3-pip)
command -v chromium >/dev/null 2>&1 || packages+=(chromium)  # SVGBrowserTests: a headless screenshot
command -v ogrinfo >/dev/null 2>&1 || packages+=(gdal-bin)   # GeoJSONGISCLITests, GDALDifferentialTests (ogr2ogr reads GPX)
command -v gpsbabel >/dev/null 2>&1 || packages+=(gpsbabel)  # GPSBabelDifferentialTests
[ -f /usr/share/javascript/leaflet/leaflet.js ] || packages+=(libjs-leaflet)  # GeoJSONBrowserTests: a web map, offline
command -v gdb >/dev/null 2>&1 || packages+=(gdb)            # the stacks of a hung test process (below)
# The PostGIS store's tests start a private cluster (initdb into a temporary directory, their own
# port and socket; never the system's cluster) with Debian's server and PostGIS (docs/fleet.md).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || packages+=(postgresql)
ls /usr/share/postgresql/*/extension/postgis.control >/dev/null 2>&1 || packages+=(postgresql-15-postgis-3)
if [ $busy = 1 ]; then command -v stress-ng >/dev/null 2>&1 || packages+=(stress-ng); fi  # --busy
if [ ${#packages[@]} -gt 0 ]; then
    echo "test.sh: installing ${packages[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
if ! python3 -c 'import geographiclib' 2>/dev/null; then
    echo "test.sh: installing geographiclib for Python (the reference for geodesic distances)" >&2
    python3 -m pip install --quiet geographiclib 2>/dev/null || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-geographiclib >/dev/null
fi

swift build

if [ $busy = 1 ]; then
    cores=$(nproc)
    echo "test.sh: --busy: stress-ng keeps $cores core(s) busy while the suite runs" >&2
    stress-ng --cpu "$cores" --quiet &
    stress=$!
    trap 'kill $stress 2>/dev/null; wait $stress 2>/dev/null || true' EXIT
fi

seconds="${WAYMARK_FUZZ_SECONDS:-60}"
if [ "$seconds" != 0 ]; then
    scripts/fuzz.sh "$seconds"
fi

# swift test, watched. Its output goes through a log, a line at a time, so that CI's log shows
# how far it got. Should it still run after WAYMARK_TEST_HANG_MINUTES (default 40; the suite
# takes minutes, on a loaded machine too), the watchdog prints the tests that started and did
# not end and every thread's stack in the test process (lldb from the toolchain, else gdb), and
# ends it: a hang fails with its place named instead of running on into CI's time limit.
# Each test also has its own guards (docs/testing.md, "Hangs").
kill_tree() {
    local child
    for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
    kill -KILL "$1" 2>/dev/null || true
}
log=$(mktemp -t waymark-swift-test.XXXXXX)
limit=$(( ${WAYMARK_TEST_HANG_MINUTES:-40} * 60 ))
stdbuf -oL -eL swift test "$@" > >(tee "$log") 2>&1 &
tests=$!
started=$SECONDS
while kill -0 "$tests" 2>/dev/null && [ $(( SECONDS - started )) -lt "$limit" ]; do
    sleep 5
done
if kill -0 "$tests" 2>/dev/null; then
    echo "test.sh: swift test still running after $(( limit / 60 )) min; the tests that started and did not end:" >&2
    sed -n 's/^.* Test \(.*\) started\.$/\1/p' "$log" | grep -v '^case passing\|^run$' | sort >"$log.started"
    sed -n 's/^.* Test \(.*\) \(passed\|failed\) after.*$/\1/p; s/^.* Test \(.*\) skipped.*$/\1/p' "$log" \
        | sort >"$log.ended"
    comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    for runner in $(pgrep -f 'PackageTests\.xctest' || true); do
        echo "test.sh: the stacks of every thread in the test process $runner:" >&2
        if command -v gdb >/dev/null 2>&1; then
            timeout 300 gdb -p "$runner" -batch -ex 'thread apply all bt 40' >&2 2>&1 || true
        else
            timeout 300 lldb -p "$runner" --batch -o 'thread backtrace all' >&2 2>&1 || true
        fi
        # The programs the tests started (gpsd, gpsfake, serve…) end with it.
        kill_tree "$runner"
    done
    kill -KILL "$tests" 2>/dev/null || true
    wait "$tests" 2>/dev/null || true
    rm -f "$log" "$log.started" "$log.ended"
    exit 1
fi
status=0
wait "$tests" || status=$?
rm -f "$log"
[ "$status" = 0 ] || exit "$status"

# A filtered run (`scripts/test.sh --filter X`) skips these. The two checks use the modules
# `swift test` built; the example is a package of its own.
if [ $# -eq 0 ]; then
    scripts/check-docs.sh
    scripts/check-portable.sh
    scripts/check-examples.sh
fi
