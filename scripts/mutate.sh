#!/usr/bin/env bash
# The team's mutation check: plants each bug of scripts/mutations.tsv, one at a time, in a private
# copy of the committed tree, and reports the ones the test suite does not catch (the survivors).
#
#   scripts/mutate.sh                 every mutation, the whole suite each time (hours on 2 cores)
#   scripts/mutate.sh --quick         the suite without the slow live suites (gpsfake, gpsd's
#                                     corpus, the browser, the examples): a first pass
#   scripts/mutate.sh m07 m31         the named mutations only
#   scripts/mutate.sh --list          the mutations, one line each
#
# It runs on demand, never in CI. It mutates a copy of HEAD in .build-mutate/tree (your working
# tree is never touched, and uncommitted changes are not in the copy); the copy's build is kept
# between runs, so a second run rebuilds only what a mutation touches. A mutation is
#   killed       when the build of the tests succeeds and at least one test fails,
#   survived     when every test passes (the suite misses this bug: it needs a test, or a reason in
#                docs/testing.md why it cannot matter),
#   unbuildable  when the mutated tree does not compile (the list needs fixing),
#   stale        when its original text is not found exactly once (the code moved on).
# Results: .build-mutate/results.tsv (id, outcome, seconds, first failing test) and a summary on
# standard output. Exit status 0 when nothing survived, 1 otherwise, 64 for a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
list="$root/scripts/mutations.tsv"
work="$root/.build-mutate"
tree="$work/tree"

quick=0
ids=()
for arg in "$@"; do
    case "$arg" in
    --quick) quick=1 ;;
    --list)
        grep -v '^#' "$list" | awk -F'\t' 'NF >= 7 { printf "%-4s %-22s %-20s %s\n", $1, $2, $6, $7 }'
        exit 0
        ;;
    -h | --help)
        sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    m[0-9]*) ids+=("$arg") ;;
    *)
        echo "mutate.sh: unknown argument $arg (see --help)" >&2
        exit 64
        ;;
    esac
done

# The slow suites --quick leaves out: they play gpsd's corpus through gpsfake, drive a browser or
# build the examples; the fast suites still cover the code they exercise.
slow='GPSDCorpusTests|GPSDLiveTests|SVGBrowserTests|HTMLBrowserTests|GPSDServeClientsTests|GPSDServeLiveTests'

mkdir -p "$tree"
# The committed tree, copied so that unchanged files keep their times (the build stays warm).
rm -rf "$work/tree-new"
mkdir -p "$work/tree-new"
git archive HEAD | tar -x -C "$work/tree-new"
python3 - "$work/tree-new" "$tree" <<'PY'
import filecmp, os, shutil, sys
new, old = sys.argv[1], sys.argv[2]
for directory, _, files in os.walk(new):
    for name in files:
        source = os.path.join(directory, name)
        target = os.path.join(old, os.path.relpath(source, new))
        if not os.path.exists(target) or not filecmp.cmp(source, target, shallow=False):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target)
for directory, dirs, files in os.walk(old):
    dirs[:] = [d for d in dirs if not (directory == old and d.startswith(".build"))]
    for name in files:
        target = os.path.join(directory, name)
        if not os.path.exists(os.path.join(new, os.path.relpath(target, old))):
            os.remove(target)
PY
rm -rf "$work/tree-new"
# Tests read ../shared beside the package (the corpus and checkers): give the copy the same.
if [ -d "$root/../shared" ] && [ ! -e "$work/shared" ]; then ln -s "$root/../shared" "$work/shared"; fi

echo "mutate.sh: building the unmutated copy once" >&2
(cd "$tree" && swift build --build-tests >"$work/build.log" 2>&1) || {
    tail -n 30 "$work/build.log" >&2
    echo "mutate.sh: the unmutated tree does not build" >&2
    exit 1
}

apply() {  # apply FILE ORIGINAL REPLACEMENT: exits 3 when ORIGINAL is not there exactly once
    python3 - "$@" <<'PY'
import sys
path, original, replacement = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path, encoding="utf-8").read()
if text.count(original) != 1:
    sys.exit(3)
open(path, "w", encoding="utf-8").write(text.replace(original, replacement, 1))
PY
}

# run_until_first_failure LOG ARGS…: runs `swift test ARGS…` in the tree in a process group of
# its own, writing LOG; succeeds when every test passed. When a test fails (a `✘ Test` line), the
# whole group is ended then and the run counts as failed.
run_until_first_failure() {
    local log=$1
    shift
    (cd "$tree" && exec setsid swift test "$@" >"$log" 2>&1) &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if grep -qE '^✘ Test .*(recorded an issue|failed)' "$log" 2>/dev/null; then
            kill -TERM -- "-$pid" 2>/dev/null || true
            sleep 1
            kill -KILL -- "-$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            return 1
        fi
        sleep 2
    done
    wait "$pid"
}

results="$work/results.tsv"
: >"$results"
killed=0 survived=0 unbuildable=0 stale=0
while IFS=$'\t' read -r id module file original replacement class effect; do
    [ -z "$id" ] || [ "${id:0:1}" = "#" ] && continue
    if [ ${#ids[@]} -gt 0 ] && [[ ! " ${ids[*]} " =~ " $id " ]]; then continue; fi
    started=$SECONDS
    target="$tree/$file"
    if [ ! -f "$target" ]; then
        # The file was moved or renamed: stale, like a text no longer found.
        stale=$((stale + 1))
        printf '%s\t%s\t%s\t%s\n' "$id" stale 0 "$file no longer exists" >>"$results"
        printf 'mutate.sh: %-4s %-11s %4ss  %s (%s)\n' "$id" stale 0 "$module" "$class" >&2
        continue
    fi
    cp "$target" "$work/original.swift"
    if ! apply "$target" "$original" "$replacement"; then
        outcome=stale first="original text not found once in $file"
        stale=$((stale + 1))
    elif ! (cd "$tree" && swift build --build-tests >"$work/build-$id.log" 2>&1); then
        outcome=unbuildable first="$(grep -m1 'error:' "$work/build-$id.log" || echo 'build failed')"
        unbuildable=$((unbuildable + 1))
    else
        args=(--skip-build)
        [ "$quick" = 1 ] && args+=(--skip "$slow")
        # A mutation is killed as soon as one test fails: the run is stopped there (with every
        # process it started, such as a served trace) rather than waiting for the rest.
        if run_until_first_failure "$work/test-$id.log" "${args[@]}"; then
            outcome=survived first="-"
            survived=$((survived + 1))
        else
            outcome=killed
            first="$(grep -m1 -E '^✘ Test .*(recorded an issue|failed)' "$work/test-$id.log" | cut -c1-160 || true)"
            [ -n "$first" ] || first="$(grep -m1 -iE 'error|fatal|crash' "$work/test-$id.log" | cut -c1-160 || echo 'the suite failed')"
            killed=$((killed + 1))
        fi
    fi
    cp "$work/original.swift" "$target"
    printf '%s\t%s\t%s\t%s\n' "$id" "$outcome" "$((SECONDS - started))" "$first" >>"$results"
    printf 'mutate.sh: %-4s %-11s %4ss  %s (%s)\n' "$id" "$outcome" "$((SECONDS - started))" "$module" "$class" >&2
done <"$list"

total=$((killed + survived + unbuildable + stale))
echo "mutate.sh: $total mutation(s): $killed killed, $survived survived, $unbuildable unbuildable, $stale stale"
if [ "$survived" -gt 0 ]; then
    echo "survivors (each needs a test, or a reason in docs/testing.md):"
    awk -F'\t' '$2 == "survived" { print "  " $1 }' "$results" | while read -r id; do
        grep -P "^$id\t" "$list" | awk -F'\t' '{ printf "  %s  %s: %s\n", $1, $3, $7 }'
    done
    exit 1
fi
