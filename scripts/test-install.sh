#!/usr/bin/env bash
# Installs a waymark .deb on a Debian 12 system that has never seen Swift, and runs the jobs
# people install it for. Needs root (chroot) and Debian's packages (debootstrap, apt).
#
# Usage: scripts/test-install.sh [DEB]   (default: the newest dist/waymark_*.deb)
#
# 1. A clean Debian 12 (bookworm) root is made with debootstrap, from Debian's packages, into
#    ${WAYMARK_DEBROOT:-$HOME/.cache/waymark/debroot-bookworm} once; each run copies it to a private
#    temporary directory, so every run starts clean.
# 2. The .deb is installed there with apt (so its Depends: are what brings the libraries), with
#    man-db to read its manual.
# 3. In the chroot, with no Swift toolchain and no libswift* anywhere:
#    waymark --version; render of a bundled trace to GeoJSON (checked as JSON); replay with a
#    scenario (its audit log checked); recording from a served trace (serve on a private port, record
#    with gpsd's protocol); sessions list and export to GeoJSON; man waymark.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(ls -t dist/waymark_*.deb 2>/dev/null | head -1 || true)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "test-install: no .deb (run scripts/release.sh first)" >&2; exit 66; }
[ "$(id -u)" = 0 ] || { echo "test-install: needs root (debootstrap and chroot)" >&2; exit 77; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2

mirror=${WAYMARK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${WAYMARK_DEBROOT:-$HOME/.cache/waymark/debroot-bookworm}
if [ ! -x "$cache/usr/bin/apt-get" ]; then
    echo "test-install: making a Debian 12 root in $cache (once; minutes)" >&2
    rm -rf "$cache.partial"
    mkdir -p "$(dirname "$cache")"
    debootstrap --variant=minbase bookworm "$cache.partial" "$mirror" >&2
    mv "$cache.partial" "$cache"
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/waymark-install.XXXXXX")
cleanup() {
    # The server of the recording test, if it still runs, goes with the root.
    in_root sh -c 'pkill -f "waymark serve" || true' 2>/dev/null || true
    for m in dev/pts dev proc; do umount "$root/$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$root"
}
trap cleanup EXIT
cp -a "$cache/." "$root/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

fail() { echo "test-install: FAILED: $*" >&2; exit 1; }

# No Swift here, before or after.
in_root sh -c 'command -v swift swiftc' && fail "the root has a Swift toolchain"

cp "$deb" "$root/tmp/waymark.deb"
mkdir -p "$root/tmp/work"
cp traces/city-walk.gpx traces/commute.yaml "$root/tmp/work/"
in_root apt-get update -q >&2
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    /tmp/waymark.deb man-db python3 >&2 || fail "apt could not install the package"

if in_root sh -c 'find / -xdev \( -name "libswift*" -o -name "libFoundation*.so*" \) | grep .'; then
    fail "the package brought a Swift runtime library"
fi
in_root ldd /usr/bin/waymark | grep -q "not found" && fail "a library is missing: $(in_root ldd /usr/bin/waymark)"

version=$(in_root waymark --version) || fail "waymark --version"
echo "test-install: waymark --version: $version" >&2
case "$version" in *commit*) ;; *) fail "--version names no commit: $version" ;; esac

in_root sh -c 'cd /tmp/work && waymark render city-walk.gpx -o walk.geojson' || fail "render to GeoJSON"
in_root python3 -c '
import json
d = json.load(open("/tmp/work/walk.geojson"))
assert d["type"] == "FeatureCollection" and d["features"], d.get("type")
assert any(f["geometry"]["type"] in ("LineString", "MultiLineString") for f in d["features"])
' || fail "the GeoJSON is not a FeatureCollection with the track"

in_root sh -c 'cd /tmp/work && waymark replay city-walk.gpx --scenario commute.yaml --rate max --quiet \
    --store /tmp/work/sessions.sqlite --audit audit.ndjson --format geojson -o delivered.geojson' \
    || fail "replay with a scenario"
in_root python3 -c '
import json
events = [json.loads(l) for l in open("/tmp/work/audit.ndjson")]
kinds = {e["event"] for e in events}
assert {"started", "fix", "finished"} <= kinds, kinds
assert any(e["event"] == "fix" and e["decision"] == "delivered" for e in events)
' || fail "the replay's audit log lacks its fixes"

# Recording from a served trace: serve speaks gpsd's protocol on a private port.
port=$(in_root python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
in_root sh -c "cd /tmp/work && (waymark serve city-walk.gpx --port $port --rate max > serve.log 2>&1 &) && \
    waymark record --gpsd 127.0.0.1:$port --store /tmp/work/sessions.sqlite --count 30 \
    -o recorded.gpx" >&2 || fail "record from the served trace"
in_root sh -c 'grep -c "<trkpt" /tmp/work/recorded.gpx' | grep -qv '^0$' || fail "the recording has no points"

listed=$(in_root waymark sessions list --store /tmp/work/sessions.sqlite) || fail "sessions list"
echo "$listed" >&2
[ "$(echo "$listed" | grep -c -E '^ *[0-9]+ +(replay|record) ')" = 2 ] || fail "sessions list does not show the replay and the recording"
in_root sh -c 'waymark sessions export 1 --store /tmp/work/sessions.sqlite --format geojson -o /tmp/work/s1.geojson' \
    || fail "sessions export"
# The pages are read whole before they are searched (grep -q would close the pipe early).
page=$(in_root sh -c 'MANPAGER=cat MANWIDTH=80 man waymark 2>/dev/null') || fail "man waymark"
grep -qi "record, replay and render" <<<"$page" || fail "man waymark does not show waymark's page"
page=$(in_root sh -c 'MANPAGER=cat MANWIDTH=80 man waymark.replay 2>/dev/null') || fail "man waymark.replay"
grep -q -- "--scenario" <<<"$page" || fail "man waymark.replay does not show replay's options"

echo "test-install: $deb installs on a clean Debian 12 and runs (version, render, replay, record, sessions, man)" >&2
