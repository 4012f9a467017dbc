#!/usr/bin/env bash
# Checks that a release build's per-fix path never copies the device's rules (`DeviceRules`,
# over a kilobyte): issue 25's replay speed rests on it, and only attributes keep it so
# (`@inline(__always)` on the getters the fix reads, `@inline(never)` on `receiveFix` and
# `currentFixFacts`, and the managers taken out of the rules while their machines decide: see
# the comment at DeviceRules' "facts the machines share"). A getter added without the attribute
# brings the copy back with no test failing and no change of behaviour; this check fails then.
#
# It reads the binary, not a run: the rules' size from their value witness table, then each
# function of the per-fix path (a replayed fix's way through the driver, the rules, the location
# service and the app's delivery, and the run's loop) in the disassembly, and fails if one copies
# a whole `DeviceRules`: a `memcpy` of the rules' size (an immediate), or a call to their
# outlined copy or their value witnesses' copy. A copy whose size the code computes would not be
# seen; the optimizer makes the rules' copies with the size written out.
#
# A function of the list that is not in the binary is either inlined into its callers (its code
# is checked there) or renamed; it is listed. The entry points that cannot be inlined (public,
# or `@inline(never)`) must be there, so renaming one fails the check rather than passing it.
#
# Usage: scripts/check-fix-path.sh [--bin WAYMARK]
#   --bin PATH   the binary (default .build/release/waymark: swift build -c release --product waymark)
# Needs objdump and nm (binutils) and `swift demangle`. On demand, beside the benchmarks (a
# debug build inlines nothing, so the check means nothing there); scripts/bench.sh --replay-cli
# runs it first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

bin="$root/.build/release/waymark"
while [ $# -gt 0 ]; do
    case "$1" in
        --bin)
            [ -n "${2:-}" ] || { echo "check-fix-path: --bin needs the path of a waymark binary" >&2; exit 64; }
            bin=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "check-fix-path: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done
[ -x "$bin" ] || { echo "check-fix-path: no binary at $bin (swift build -c release --product waymark)" >&2; exit 66; }
# The copies are told by x86-64 instructions (a `memcpy` whose size is an immediate in %edx or
# %rdx, a call of the rules' copy); elsewhere the check would find none and pass.
[ "$(uname -m)" = x86_64 ] || { echo "check-fix-path: reads x86-64 disassembly only (this machine is $(uname -m))" >&2; exit 69; }
for tool in objdump nm swift; do
    command -v "$tool" > /dev/null || { echo "check-fix-path: needs $tool" >&2; exit 69; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-fixpath.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The per-fix path, as demangled names (a name matches every function whose demangled name
# contains it: its async parts, closures and specializations too; a private function's reads
# "(name in _…)"). "must" marks the entry points that cannot be inlined away.
path_functions=(
    "must|Waymark.Simulation.run<A where A: Waymark.SynchronousLocationSource>("
    "may|Waymark.Simulation.(play in "
    "must|Waymark.Simulation.receive(Waymark.SourceEvent) -> ()"
    "may|Waymark.Simulation.decide(Waymark.SourceEvent) -> ()"
    "may|Waymark.Simulation.fixDecided("
    "may|Waymark.Simulation.deliver(count: Swift.Int, reason: Waymark.FixReason, manager: Swift.Int) -> ()"
    "may|Waymark.Simulation.settle() -> ()"
    "may|Waymark.Simulation.advance(to: Swift.Duration) -> ()"
    "may|Waymark.Simulation.perform([Waymark.DeviceAction]) -> ()"
    "may|Waymark.Simulation.reportCreatedManagers() -> ()"
    "may|Waymark.DeviceRules.receive(_: Waymark.SourceEvent, into: inout [Waymark.DeviceAction]) -> ()"
    "must|Waymark.DeviceRules.receiveFix(_: Waymark.SourceEvent, into: inout [Waymark.DeviceAction])"
    "must|Waymark.DeviceRules.currentFixFacts() -> Waymark.DeviceRules.FixFacts"
    "may|Waymark.DeviceRules.settleStep() -> "
    "may|Waymark.DeviceRules.servicesObserve(Waymark.SourceEvent) -> "
    "may|Waymark.DeviceLocationManager.deliver(_: [Waymark.LocationUpdate], liveBlocked: Swift.Bool) -> ()"
    "may|Waymark.LocationServiceStateMachine.(decide in "
)

# The rules' size: the value witness table's ninth word (after eight function pointers).
rules='$s7Waymark11DeviceRulesV'
vwt=$(nm "$bin" | awk -v s="${rules}WV" '$3 == s { print $1 }')
[ -n "$vwt" ] || { echo "check-fix-path: $bin has no value witness table for DeviceRules (not a waymark build?)" >&2; exit 65; }
start=$(( 16#$vwt + 64 ))
word=$(objdump -s --start-address=$start --stop-address=$(( start + 8 )) "$bin" | awk 'NR > 4 { print $2 $3; exit }')
# Little-endian: the bytes reversed.
size=$(( 16#${word:6:2}${word:4:2}${word:2:2}${word:0:2} ))
[ "$size" -gt 256 ] || { echo "check-fix-path: read a size of $size bytes for DeviceRules; the table's layout is not the one expected" >&2; exit 65; }
hex=$(printf '0x%x' "$size")

# Every function, mangled and demangled, one per line.
nm "$bin" | awk '$2 ~ /^[tT]$/ && $3 ~ /^\$s7Waymark/ { print $3 }' | sort -u > "$work/mangled"
swift demangle < "$work/mangled" > "$work/demangled"
paste "$work/mangled" "$work/demangled" > "$work/names"

# Functions that copy the rules whole, with what they do.
objdump -d --no-show-raw-insn "$bin" | awk -v hex="$hex" -v rules="$rules" -v size="$size" '
    /^[0-9a-f]+ <.*>:$/ { fn = substr($2, 2, length($2) - 3); next }
    index($0, "mov    $" hex ",%edx") || index($0, "mov    $" hex ",%rdx") { print fn "\tmemcpy of " size " bytes"; next }
    /call/ && (index($0, rules "WOc>") || index($0, rules "Vwcp>") || index($0, rules "VwCP>") \
        || index($0, "__swift_memcpy" size "_")) { print fn "\tcall of the rules\x27 copy" }
' | sort -u > "$work/copies"

failed=0
checked=0
inlined=()
for entry in "${path_functions[@]}"; do
    kind=${entry%%|*}
    name=${entry#*|}
    matches=$(awk -F '\t' -v n="$name" 'index($2, n) { print $1 }' "$work/names")
    if [ -z "$matches" ]; then
        if [ "$kind" = must ]; then
            echo "check-fix-path: FAIL: $name is not in the binary; it cannot be inlined, so it was renamed: update this script's list" >&2
            failed=1
        else
            inlined+=("$name")
        fi
        continue
    fi
    while read -r m; do
        checked=$(( checked + 1 ))
        copy=$(awk -F '\t' -v m="$m" '$1 == m { print $2 }' "$work/copies" | paste -sd ';' -)
        if [ -n "$copy" ]; then
            echo "check-fix-path: FAIL: $(awk -F '\t' -v m="$m" '$1 == m { print $2 }' "$work/names") copies the rules ($copy)" >&2
            failed=1
        fi
    done <<< "$matches"
done

echo "check-fix-path: DeviceRules is $size bytes; $checked function(s) of the per-fix path checked"
for name in "${inlined[@]}"; do echo "  not in the binary (inlined into its callers, which are checked; or renamed): $name"; done
echo "  elsewhere, functions that copy the rules (off the per-fix path): $(cut -f1 "$work/copies" | sort -u | wc -l)"
if [ $failed = 1 ]; then
    echo "check-fix-path: the per-fix path copies the rules: see the comment at DeviceRules' \"facts the machines share\"" >&2
    exit 1
fi
echo "check-fix-path: no copy of the rules on the per-fix path"
