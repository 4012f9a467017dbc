#!/usr/bin/env bash
# Benchmarks, on demand (not part of CI). Each prints a ratio against a peer tool measured in the
# same run.
#   scripts/bench.sh [--sizes 10,100,1000]   GPX → GeoJSON: synthetic 10 MB, 100 MB and 1 GB files
#       (about 3 GB of disk in bench-out/), Waymark against gpsbabel and ogr2ogr, with wall time,
#       MB/s, peak RSS and speed-up, then a 1 MB file end to end.
#   scripts/bench.sh --replay [--hours 24]   the simulated app: fixes per second in virtual time
#                                             (the library), then `waymark replay` end to end
#                                             against `waymark render` of the same traces
#       on a 24-hour 1 Hz trace, without and with the audit log, against gpsfake through gpsd.
#   scripts/bench.sh --replay-cli [--points 500000] [--only gpxlogger,day-with-stops] [--peer BIN]
#       `waymark replay` alone, end to end: fixes/s per layout against gpsbabel reading the same
#       GPX (and `waymark render`), and against another waymark build (--peer, e.g. main's)
#       run alternately with this one.
#   Both replay modes first check that the build's per-fix path copies no rules
#   (scripts/check-fix-path.sh), and stop if it does.
#   scripts/bench.sh --record [--seconds 60]  live recording at 10 Hz from a private gpsd: latency
#       from TPV arrival to stored and logged (p50, p99), CPU per hour, against gpspipe.
#   scripts/bench.sh --store [--points 1000000]  the session store: locations per second for a
#       1 M-point replay in batched transactions, against the sqlite3 shell importing the same
#       rows; and per-fix durable commit latency (p50, p99), against Python's sqlite3 module.
#   scripts/bench.sh --layouts [--sizes 10,100] [--only gpxlogger,strava]  GPX → GeoJSON on the
#       point layouts of common writers (gpxlogger, Garmin Connect, Strava, OsmAnd, GPSLogger 1.0,
#       tabs and CRLF, Apple Health): MB/s, points/s and peak RSS per layout and size, against
#       gpsbabel and ogr2ogr in the same run.
#   scripts/bench.sh --nmea [--sizes 10,100] [--only sirf,ublox,rmc,rtk]  NMEA 0183 log → GeoJSON on
#       the sentence layouts of common receivers: MB/s, fixes/s and peak RSS, against
#       gpsbabel -i nmea in the same run.
#   scripts/bench.sh --formats [--points 200000]  TCX, KML, GeoJSON, CSV and FIT (as gpsbabel and
#       Waymark write them) → GeoJSON: points/s and peak RSS, against gpsbabel and ogr2ogr reading
#       the same files in the same run.
#   scripts/bench.sh --serve [--clients 100] [--seconds 30]  `waymark serve` playing a 10 Hz NMEA
#       log in real time to N clients that watch JSON (in the benchmark's process): the server's
#       CPU as % of one core and each client's TPVs a second, against gpsd serving the same log
#       (fed by scripts/nmea-feeder.py, whose CPU is not counted) to as many clients.
#   scripts/bench.sh --parts FILE.gpx  where the time of GPX → GeoJSON goes inside one process: the
#       bytes read alone, the reader alone, the writer alone, both, and both on two threads.
#   --install-peers   first apt-get install the peers (gpsbabel, gdal-bin, gpsd, gpsd-clients).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
mode=render
for a in "$@"; do
    if [ "$a" = --install-peers ]; then
        as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gpsbabel gdal-bin gpsd gpsd-clients sqlite3 >/dev/null
    elif [ "$a" = --replay ]; then
        mode=replay
    elif [ "$a" = --replay-cli ]; then
        mode=replay-cli
    elif [ "$a" = --record ]; then
        mode=record
    elif [ "$a" = --store ]; then
        mode=store
    elif [ "$a" = --parts ]; then
        mode=parts
    elif [ "$a" = --layouts ]; then
        mode=layouts
    elif [ "$a" = --nmea ]; then
        mode=nmea
    elif [ "$a" = --formats ]; then
        mode=formats
    elif [ "$a" = --serve ]; then
        mode=serve
    else
        args+=("$a")
    fi
done
# Statically linked, as README.md installs it: a dynamically linked Swift binary spends about 10 ms
# of every run binding symbols, a third of the 1 MB target.
# Only the two executables: the package's dynamic GRDB library cannot be linked with a static
# standard library.
swift build -c release --static-swift-stdlib --product waymark >&2
swift build -c release --static-swift-stdlib --product waymark-bench >&2
# The replay's speed rests on its per-fix path never copying the device's rules: check the build.
if [ "$mode" = replay ] || [ "$mode" = replay-cli ]; then scripts/check-fix-path.sh; fi
if [ "$mode" = replay ]; then
    .build/release/waymark-bench replay --dir bench-out "${args[@]}"
    .build/release/waymark-bench replay-cli --dir bench-out
elif [ "$mode" = replay-cli ]; then
    .build/release/waymark-bench replay-cli --dir bench-out "${args[@]}"
elif [ "$mode" = layouts ]; then
    .build/release/waymark-bench layouts --dir bench-out --waymark .build/release/waymark "${args[@]}"
elif [ "$mode" = formats ]; then
    .build/release/waymark-bench formats --dir bench-out --waymark .build/release/waymark "${args[@]}"
elif [ "$mode" = nmea ]; then
    .build/release/waymark-bench nmea --dir bench-out --waymark .build/release/waymark "${args[@]}"
elif [ "$mode" = serve ]; then
    .build/release/waymark-bench serve --dir bench-out --waymark .build/release/waymark "${args[@]}"
elif [ "$mode" = parts ]; then
    .build/release/waymark-bench parts "${args[@]}"
elif [ "$mode" = store ]; then
    .build/release/waymark-bench store --dir bench-out "${args[@]}"
elif [ "$mode" = record ]; then
    .build/release/waymark-bench record --dir bench-out "${args[@]}"
else
    .build/release/waymark-bench --dir bench-out --waymark .build/release/waymark "${args[@]}"
fi
