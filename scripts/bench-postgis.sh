#!/usr/bin/env bash
# The PostGIS store's benchmark (docs/fleet.md, docs/benchmarks.md) against a private server:
# initdb into a temporary directory, a free port and a Unix socket there (as root, the server
# runs as the postgres user), stopped and removed at the end. Installs postgresql,
# postgresql-15-postgis-3, gdal-bin (ogr2ogr, the peer) when missing. Run on demand, not in CI.
# Usage: scripts/bench-postgis.sh [waymark-bench postgis options, e.g. --points 100000 --seconds 10]
set -euo pipefail
cd "$(dirname "$0")/.."
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
packages=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || packages+=(postgresql)
ls /usr/share/postgresql/*/extension/postgis.control >/dev/null 2>&1 || packages+=(postgresql-15-postgis-3)
command -v ogr2ogr >/dev/null 2>&1 || packages+=(gdal-bin)
if [ ${#packages[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-pgbench.XXXXXX")
chmod 755 "$work"
as_server() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres:postgres "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() { as_server "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
as_server "$bin/initdb" -D "$work/data" -U waymark --auth=trust -E UTF8 --no-sync >/dev/null
as_server "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -o \
    "-p $port -k $work -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
[ -n "${WAYMARK_BENCH_NO_BUILD:-}" ] || swift build -c release --product waymark-bench >/dev/null
.build/release/waymark-bench postgis --store "postgresql://waymark@/postgres?host=$work&port=$port" "$@"
