#!/usr/bin/env bash
# The whole test suite, from a fresh clone on Debian 12 with Swift 6.3:
#   1. installs what the build and the tests use when it is missing: libgps-dev and
#      libsqlite3-dev (the build links libgps and SQLite), gpsd and gpsd-clients (gpsfake replays
#      receiver logs into a private gpsd), xmllint, the sqlite3 shell (tests read the store as a
#      user would), GeographicLib for Python, chromium (headless, it screenshots render's SVG), gdal-bin
#      (ogrinfo reads render's GeoJSON for GIS), python3-gps
#      and tmux (serve is tested with gpsd's Python client and with cgps, read in a tmux pane),
#   2. builds the package (the CLI tests run the built `waymark`),
#   3. fuzzes the GPX reader, the writers, scenario files, gpsd's stream and the NMEA and gpsd
#      capture readers with libFuzzer for WAYMARK_FUZZ_SECONDS in all (default 60; 0 skips;
#      scripts/fuzz.sh says how it is shared),
#   4. runs `swift test`,
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
command -v ogrinfo >/dev/null 2>&1 || packages+=(gdal-bin)   # GeoJSONGISCLITests: GDAL reads --only, --geojson-points
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

swift test "$@"

# A filtered run (`scripts/test.sh --filter X`) skips these. The two checks use the modules
# `swift test` built; the example is a package of its own.
if [ $# -eq 0 ]; then
    scripts/check-docs.sh
    scripts/check-portable.sh
    scripts/check-examples.sh
fi
