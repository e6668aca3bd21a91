#!/usr/bin/env bash
# The release artefacts, from one command, into dist/ (docs/INSTALL.md):
#
#   echomq-<v>-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl   (+ the emq executable)
#   echomq-<v>.tar.gz                      the Python sdist (builds from source)
#   echomq-<v>.tgz                         npm main package (JS + types + sources, no binary)
#   echomq-linux-x64-gnu-<v>.tgz           npm platform package (the prebuilt .node + emq)
#   echomq-<v>-linux-x86_64.tar.gz         C/C++: headers, libechomq.so.<v> (SONAME), .a, .pc
#
#   bash scripts/dist.sh
#
# Every binary is built for x86_64 Linux against glibc 2.17 (manylinux2014)
# with zig as the C compiler and linker (PyPI `ziglang`, driven by maturin for
# the wheel and by cargo-zigbuild for the others), release profile, symbols
# stripped, in their own target and build directory ($CARGO_TARGET_DIR/dist)
# so the host builds of the test suites are left alone. The tools go into a virtualenv
# ($CARGO_TARGET_DIR/dist-tools) from PyPI. Every artefact carries the one
# workspace version (`[workspace.package] version` in Cargo.toml).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

VERSION=$(workspace_version)
DIST="${DIST_DIR:-$ROOT/dist}"
TOOLS="$CARGO_TARGET_DIR/dist-tools"
TARGET=x86_64-unknown-linux-gnu
GLIBC=2.17
export CARGO_TARGET_DIR="$CARGO_TARGET_DIR/dist"
# Its own build directory too, even where CARGO_BUILD_BUILD_DIR shares one: the
# zig-linked units have the same file names as the host builds of the same
# target and would overwrite them, so each side would rebuild after the other.
export CARGO_BUILD_BUILD_DIR="$CARGO_TARGET_DIR"
export CARGO_PROFILE_RELEASE_STRIP=symbols
LIB="$CARGO_TARGET_DIR/$TARGET/release"
# SONAME: the ABI a program records. Before 1.0 every minor may break it
# (cargo's rule), so 0.x gets libechomq.so.0.<minor>; from 1.0, the major.
IFS=. read -r MAJOR MINOR _ <<<"${VERSION%%[-+]*}"
if [ "$MAJOR" = 0 ]; then SOVERSION="0.$MINOR"; else SOVERSION="$MAJOR"; fi
SONAME="libechomq.so.$SOVERSION"
MAX_BYTES=$((10 * 1024 * 1024))
ADDON_MAX_BYTES=$((16 * 1024 * 1024))
started=$SECONDS

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

say "dist: echomq $VERSION → $DIST"
for tool in strip:binutils readelf:binutils objdump:binutils; do
  command -v "${tool%%:*}" >/dev/null || apt_install "${tool#*:}"
done
command -v node >/dev/null || apt_install nodejs npm
if [ ! -x "$TOOLS/bin/python" ]; then
  python3 -m venv "$TOOLS" || { apt_install python3-venv; python3 -m venv "$TOOLS"; }
fi
say "dist: build tools (maturin, ziglang, cargo-zigbuild, auditwheel) into $TOOLS"
# Pinned: release builds should not change with whatever PyPI serves today.
# (The wheel's build does not reuse the crates compiled for the C library and
# the addon: their zig wrappers differ by path, and ffi-c's rlib crate type
# asks cargo for another LTO mode of every dependency. Two compiles, measured
# in docs/INSTALL.md.)
"$TOOLS/bin/python" -m pip install --disable-pip-version-check -q \
  'maturin==1.16.0' 'cargo-zigbuild==0.24.0' 'ziglang==0.17.1' 'auditwheel>=6,<7'
export PATH="$TOOLS/bin:$PATH"
rm -rf "$DIST"
mkdir -p "$DIST"

size_of() {  # size_of FILE [LIMIT]: print its size; fail above LIMIT bytes
  local size; size=$(stat -c %s "$1")
  awk -v f="$(basename "$1")" -v s="$size" 'BEGIN { printf "  %-64s %6.2f MB\n", f, s / 1048576 }'
  [ -z "${2:-}" ] || [ "$size" -le "$2" ] || { echo "$1 is larger than $2 bytes" >&2; exit 1; }
}

check_glibc() {  # check_glibc FILE: needs no glibc symbol newer than $GLIBC
  local newest
  newest=$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
  printf '  %-64s needs glibc %s\n' "$(basename "$1")" "$newest"
  if [ "$(printf '%s\n%s\n' "$newest" "$GLIBC" | sort -V | tail -n 1)" != "$GLIBC" ]; then
    echo "$1 needs glibc $newest, newer than $GLIBC" >&2; exit 1
  fi
}

say "dist: C library, Node addon and the emq executable (cargo zigbuild --target $TARGET.$GLIBC, SONAME $SONAME)"
# napi-derive writes the addon's TypeScript declarations while echomq-node
# compiles (into NAPI_TYPE_DEF_TMP_FOLDER); touching the crate makes this build
# compile it, so the folder describes exactly the addon that ships. The
# committed native.d.ts is checked against it below (the Node suite reuses this
# addon instead of building its own with `napi build`).
typedefs="$CARGO_TARGET_DIR/napi-type-defs"
rm -rf "$typedefs"; mkdir -p "$typedefs"
touch "$ROOT/bindings-node/src/lib.rs"
NAPI_TYPE_DEF_TMP_FOLDER="$typedefs" EMQ_SONAME="$SONAME" \
  cargo zigbuild --release --target "$TARGET.$GLIBC" -p echomq-ffi -p echomq-node -p echomq-cli
say "dist: bindings-node/native.d.ts matches the addon's declarations"
(cd "$ROOT/bindings-node" && { [ -d node_modules/@napi-rs/cli ] || ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error; } \
  && node scripts/native-dts.mjs "$typedefs" >"$stage/native.d.ts")
cmp -s "$stage/native.d.ts" "$ROOT/bindings-node/native.d.ts" || {
  diff -u "$ROOT/bindings-node/native.d.ts" "$stage/native.d.ts" | head -40 >&2
  echo "dist: bindings-node/native.d.ts differs from the addon's declarations: commit the regenerated file (cd bindings-node && npm run build)" >&2
  exit 1
}
# The libraries link no CLI, terminal or HTTP crates: `emq` is its own
# executable, shipped beside the library in the wheel and the platform package.
for pkg in echomq-ffi echomq-node echomq-python; do
  if cargo tree -p "$pkg" -e normal --prefix none 2>/dev/null | grep -qE '^(axum|clap|crossterm|echomq-cli|echomq-dashboard) '; then
    echo "dist: $pkg depends on the CLI or its crates" >&2; exit 1
  fi
done

say "dist: Python wheel (maturin --zig, manylinux2014, emq in its scripts) and sdist"
# bindings-python/echomq._native.data/scripts/ becomes the wheel's .data/scripts/: pip
# installs `emq` into the environment's bin/. Staged (gitignored) for this
# build only, so the sdist carries sources and no binary.
wheel_data="$ROOT/bindings-python/echomq._native.data"
rm -rf "$wheel_data"
install -D -m 755 "$LIB/emq" "$wheel_data/scripts/emq"
maturin build --release --strip --zig --target "$TARGET" --compatibility manylinux2014 \
  -m bindings-python/Cargo.toml --out "$DIST"
rm -rf "$wheel_data"
maturin sdist -m bindings-python/Cargo.toml --out "$DIST"
wheel=$(ls "$DIST"/echomq-"$VERSION"-cp39-abi3-*manylinux2014_x86_64*.whl)
# auditwheel reads the extension's symbol versions and linked libraries: the
# wheel must really be what its manylinux2014 tag promises.
auditwheel show "$wheel" | tee "$stage/auditwheel.txt"
tr -s ' \n' ' ' <"$stage/auditwheel.txt" \
  | grep -q 'consistent with the following platform tag: "manylinux_2_17_x86_64"' \
  || { echo "auditwheel: $wheel is not manylinux_2_17 (manylinux2014)" >&2; exit 1; }

say "dist: npm packages"
addon="$stage/echomq.linux-x64-gnu.node"
cp "$LIB/libechomq_node.so" "$addon"
node scripts/dist-npm.js --version "$VERSION" --addon "$addon" --emq "$LIB/emq" --stage "$stage/npm" --out "$DIST"

say "dist: C tarball"
name="echomq-$VERSION-linux-x86_64"
c="$stage/$name"
mkdir -p "$c/include" "$c/lib/pkgconfig"
cp include/echomq.h "$c/include/"
if [ -f include/echomq.hpp ]; then cp include/echomq.hpp "$c/include/"; fi
install -m 755 "$LIB/libechomq.so" "$c/lib/libechomq.so.$VERSION"
ln -s "libechomq.so.$VERSION" "$c/lib/$SONAME"
ln -s "$SONAME" "$c/lib/libechomq.so"
# The archive keeps its symbol tables (a linker needs them); only debug info goes.
install -m 644 "$LIB/libechomq.a" "$c/lib/libechomq.a"
strip --strip-debug "$c/lib/libechomq.a"
# Relative to wherever the tarball is unpacked: pkg-config's ${pcfiledir}.
sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e 's|@LIBDIR@|${prefix}/lib|' \
  -e 's|@INCLUDEDIR@|${prefix}/include|' -e "s|@VERSION@|$VERSION|" \
  ffi-c/echomq.pc.in >"$c/lib/pkgconfig/echomq.pc"
sed -e "s|@VERSION@|$VERSION|g" -e "s|@SONAME@|$SONAME|g" ffi-c/RELEASE-README.md >"$c/README.md"
cp LICENSE LICENSE-MIT LICENSE-APACHE CHANGELOG.md "$c/"
readelf -d "$c/lib/libechomq.so.$VERSION" | grep -q "Library soname: \[$SONAME\]" \
  || { echo "libechomq.so.$VERSION has no SONAME $SONAME" >&2; exit 1; }
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name -czf "$DIST/$name.tar.gz" "$name"

say "dist: $(ls "$DIST" | wc -l) artefacts in $DIST ($((SECONDS - started)) s)"
check_glibc "$addon"
check_glibc "$LIB/emq"
check_glibc "$c/lib/libechomq.so.$VERSION"
# The wheel and the addon are what every install downloads: at most 10 MB for
# the wheel (the extension and the emq executable); the addon carries the
# cluster client and the cron time-zone database, its budget is 16 MB.
size_of "$wheel" "$MAX_BYTES"
size_of "$addon" "$ADDON_MAX_BYTES"
size_of "$LIB/emq"
size_of "$c/lib/libechomq.so.$VERSION"
python3 - "$wheel" <<'EOF'
import sys, zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    if "_native" in i.filename or i.filename.endswith("scripts/emq"):
        print(f"  {i.filename:<64} {i.file_size / 1048576:6.2f} MB unpacked")
EOF
for f in "$DIST"/*.tgz "$DIST"/*.tar.gz; do size_of "$f"; done
ls -l "$DIST"
