#!/usr/bin/env bash
# Checks that the libraries users import on Apple systems stay free of Linux-only API outside
# #if guards: Waymark, the Apple-spelled modules, WaymarkTesting and WaymarkStore build for macOS and iOS, where iOS
# developers run their tests; only WaymarkGPSD (libgps) and the tools are Linux-only. We have no
# Apple SDK here, so this is two checks, neither a Darwin build (docs/portability.md says what
# they prove and what they cannot):
#   1. scripts/portable/lint.py: no `import Glibc`, no `Glibc.` name, and none of a list of
#      Linux-only calls, flags and fields outside a Linux branch (canImport(Glibc), os(Linux));
#   2. a type-check of the three targets with their Linux branches switched off, so that they
#      take their Darwin branches and see only scripts/portable/Darwin.swift: a stand-in for
#      Darwin that declares the C API they use, in Darwin's shapes where those differ. It needs
#      the modules of a debug build (WaymarkStore's GRDB): run it after `swift build`.
# Writes only into a private temporary directory. Usage: scripts/check-portable.sh
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(Waymark WaymarkCoreLocation WaymarkUIKit WaymarkBackgroundTasks WaymarkTesting WaymarkStore)
python3 scripts/portable/lint.py "${targets[@]/#/Sources/}"

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-portable.XXXXXX")
trap 'rm -rf "$work"' EXIT
modules="$work/modules"
mkdir -p "$modules"
build=$(swift build --show-bin-path)
[ -f "$build/Modules/GRDB.swiftmodule" ] || { echo "check-portable: build first (swift build): no GRDB module in $build" >&2; exit 1; }

stand_in() {  # module name, source
    swiftc -parse-as-library -emit-module -module-name "$1" -I "$modules" "$2" -emit-module-path "$modules/$1.swiftmodule"
}
stand_in DarwinTypes scripts/portable/DarwinTypes.swift
stand_in Darwin scripts/portable/Darwin.swift

# The sources with their Linux branches off: `#if canImport(Glibc)` and `#if os(Linux)` become
# `#if false`, so `#elseif canImport(Darwin)` (true: the stand-in) and `#else` are compiled.
for target in "${targets[@]}"; do
    mkdir -p "$work/src/$target"
    cp -R "Sources/$target/." "$work/src/$target/"
    find "$work/src/$target" -name '*.swift' -exec sed -i -E \
        's/canImport\((Glibc|Musl)\)/false/g; s/os\(Linux\)/false/g' {} +
done

compile() {  # target, then extra flags
    local target=$1
    shift
    local files=()
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$work/src/$target" -name '*.swift' -print0 | sort -z)
    if ! swiftc -emit-module -wmo -parse-as-library -swift-version 6 -module-name "$target" -package-name waymark \
        -I "$modules" -emit-module-path "$modules/$target.swiftmodule" "$@" "${files[@]}" >"$work/$target.log" 2>&1; then
        sed "s|$work/src/$target/|Sources/$target/|g" "$work/$target.log" >&2
        echo "check-portable: $target does not type-check with its Linux branches off (against scripts/portable/Darwin.swift)" >&2
        exit 1
    fi
}
compile Waymark
# The Apple-spelled modules, in the order they import each other; WaymarkTesting imports WaymarkUIKit.
compile WaymarkCoreLocation
compile WaymarkUIKit
compile WaymarkBackgroundTasks
compile WaymarkTesting
grdb_sqlite=$(find .build/checkouts/GRDB.swift/Sources/GRDBSQLite -name module.modulemap | head -n 1)
compile WaymarkStore -I "$build/Modules" -Xcc -fmodule-map-file="$grdb_sqlite"
echo "check-portable: ${targets[*]} type-check with their Linux branches off, against the Darwin stand-in"
