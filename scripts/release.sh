#!/usr/bin/env bash
# Builds a release of waymark for people without Swift: a self-contained binary, a tarball and a
# Debian package, with their checksums.
#
# Usage: scripts/release.sh [--out DIR] [--skip-build]
#   --out DIR      where the release goes (default: dist/)
#   --skip-build   package the binary of the last release build again
#
# What it makes, in DIR:
#   waymark-VERSION-linux-ARCH.tar.gz   bin/waymark, man pages, shell completions, LICENSE, README
#   waymark_VERSION_DEBARCH.deb         the same in Debian's places; Depends: from dpkg-shlibdeps
#   SHA256SUMS
#
# The binary links the Swift runtime and Foundation in (--static-swift-stdlib): it needs only what
# a Debian system has or gets from apt (glibc, libgps, libsqlite3, libxml2 and so on), and the
# script checks with ldd that no libswift* and no libFoundation* is left. `waymark --version`
# names the version (Sources/WaymarkCLI/Version.swift, the one place it is written) and the commit.
# A release build takes about 15 minutes on 2 cores; nothing is fetched but Debian's packages
# (dpkg-dev, lintian) when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=dist
skip_build=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --skip-build) skip_build=1; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "release: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done

need() {
    local missing=()
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "release: installing ${missing[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
    fi
}
need dpkg-shlibdeps:dpkg-dev dpkg-deb:dpkg lintian:lintian gzip:gzip

version=$(sed -n 's/^ *static let number = "\(.*\)"$/\1/p' Sources/WaymarkCLI/Version.swift)
[ -n "$version" ] || { echo "release: no version in Sources/WaymarkCLI/Version.swift" >&2; exit 70; }
commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- Sources Package.swift || commit="$commit-modified"
arch=$(uname -m)
debarch=$(dpkg --print-architecture)
scratch=.build-release
echo "release: waymark $version, commit $commit, $arch" >&2

# The binary. The commit's file goes, whatever happens.
trap 'rm -f Sources/WaymarkCLI/BuildCommit.release.swift' EXIT
cat > Sources/WaymarkCLI/BuildCommit.release.swift <<EOF
// Written by scripts/release.sh (not committed): the commit of a release build.
#if WAYMARK_RELEASE
    let waymarkBuildCommit: String? = "$commit"
#endif
EOF
if [ $skip_build = 0 ]; then
    swift build -c release --scratch-path "$scratch" --product waymark --static-swift-stdlib \
        -Xswiftc -DWAYMARK_RELEASE >&2
    swift build -c release --scratch-path "$scratch" --product generate-manual >&2
fi
rm -f Sources/WaymarkCLI/BuildCommit.release.swift
bin=$scratch/release/waymark
[ -x "$bin" ] || { echo "release: $bin was not built" >&2; exit 70; }
if ldd "$bin" | grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime'; then
    echo "release: the binary still links the Swift runtime or Foundation dynamically (above)" >&2
    exit 70
fi
"$bin" --version | grep -q "commit $commit" || {
    echo "release: $bin --version does not name commit $commit: $("$bin" --version)" >&2
    exit 70
}

stage=$(mktemp -d)
trap 'rm -rf "$stage"; rm -f Sources/WaymarkCLI/BuildCommit.release.swift' EXIT
mkdir -p "$out"

# What both the tarball and the package hold.
files=$stage/files
mkdir -p "$files/man1" "$files/completions"
strip -o "$files/waymark" "$bin"
"$scratch/release/generate-manual" "$files/waymark" --multi-page --date "$(git log -1 --format=%cs)" \
    --output-directory "$files/man1" >&2
# mdoc has no empty lines: a paragraph break is .Pp (groff warns of each empty line otherwise).
sed -i 's/^$/.Pp/' "$files/man1/"*.1
# A completion script is sourced, not run: no #! line.
"$files/waymark" --generate-completion-script bash | sed '1{/^#!/d}' > "$files/completions/waymark.bash"
"$files/waymark" --generate-completion-script zsh > "$files/completions/_waymark"
"$files/waymark" --generate-completion-script fish > "$files/completions/waymark.fish"

# The tarball.
name=waymark-$version-linux-$arch
tree=$stage/$name
mkdir -p "$tree/bin" "$tree/share/man/man1" "$tree/share/bash-completion/completions" \
    "$tree/share/zsh/site-functions" "$tree/share/fish/vendor_completions.d"
cp "$files/waymark" "$tree/bin/"
cp "$files/man1/"*.1 "$tree/share/man/man1/"
cp "$files/completions/waymark.bash" "$tree/share/bash-completion/completions/waymark"
cp "$files/completions/_waymark" "$tree/share/zsh/site-functions/"
cp "$files/completions/waymark.fish" "$tree/share/fish/vendor_completions.d/"
cp LICENSE "$tree/"
cp packaging/README.release "$tree/README"
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name \
    --mtime="$(git log -1 --format=%cI)" -czf "$out/$name.tar.gz" "$name"

# The Debian package.
deb=$stage/deb
mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/man/man1" "$deb/usr/share/doc/waymark" \
    "$deb/usr/share/bash-completion/completions" "$deb/usr/share/zsh/vendor-completions" \
    "$deb/usr/share/fish/vendor_completions.d" "$deb/usr/share/lintian/overrides"
install -m 0755 "$files/waymark" "$deb/usr/bin/waymark"
for page in "$files/man1/"*.1; do gzip -9n < "$page" > "$deb/usr/share/man/man1/$(basename "$page").gz"; done
install -m 0644 "$files/completions/waymark.bash" "$deb/usr/share/bash-completion/completions/waymark"
install -m 0644 "$files/completions/_waymark" "$deb/usr/share/zsh/vendor-completions/_waymark"
install -m 0644 "$files/completions/waymark.fish" "$deb/usr/share/fish/vendor_completions.d/waymark.fish"
install -m 0644 packaging/debian/copyright "$deb/usr/share/doc/waymark/copyright"
install -m 0644 packaging/debian/lintian-overrides "$deb/usr/share/lintian/overrides/waymark"
{
    echo "waymark ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version; see CHANGELOG.md in the source."
    echo
    echo " -- Waymark developers <waymark@users.noreply.github.com>  $(date -R -d "$(git log -1 --format=%cI)")"
} | gzip -9n > "$deb/usr/share/doc/waymark/changelog.gz"
# Depends: the packages of the libraries the binary links, as dpkg-shlibdeps finds them.
shlib=$stage/shlib
mkdir -p "$shlib/debian"
printf 'Source: waymark\n\nPackage: waymark\nArchitecture: any\n' > "$shlib/debian/control"
depends=$(cd "$shlib" && dpkg-shlibdeps -O "$deb/usr/bin/waymark" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "release: dpkg-shlibdeps found no dependencies" >&2; exit 70; }
size=$(du -sk --exclude=DEBIAN "$deb" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$debarch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$size/" \
    packaging/debian/control.in > "$deb/DEBIAN/control"
find "$deb" -type d -exec chmod 0755 {} +
debfile=$out/waymark_${version}_$debarch.deb
dpkg-deb --root-owner-group -Zxz --build "$deb" "$debfile" >&2
echo "release: Depends: $depends" >&2

# lintian: the tags it may still give are overridden, each with its reason, in
# packaging/debian/lintian-overrides (installed with the package, as Debian's own packages do).
if lintian --no-tag-display-limit "$debfile" > "$stage/lintian.txt" 2>&1 && ! grep -q '^[EW]:' "$stage/lintian.txt"; then
    echo "release: lintian is clean (but for the overrides packaging/debian/lintian-overrides explains)" >&2
else
    cat "$stage/lintian.txt" >&2
    if grep -q '^E:' "$stage/lintian.txt"; then echo "release: lintian found errors" >&2; exit 70; fi
fi

(cd "$out" && sha256sum "$name.tar.gz" "$(basename "$debfile")" > SHA256SUMS)
echo "release: $out/$name.tar.gz, $debfile, $out/SHA256SUMS" >&2
