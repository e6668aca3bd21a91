#!/usr/bin/env bash
# The release artefacts of scripts/dist.sh install and work where there is no
# Rust: every step below runs with a PATH that has no cargo/rustc and an empty
# HOME (so no ~/.cargo or ~/.rustup either), against a throwaway redis-server.
#
#   Python  a fresh venv, `pip install --no-index <wheel>`, a round trip
#   Node    an empty project, `npm install --offline <main.tgz> <platform.tgz>`,
#           a round trip from require() and from import; the main package alone
#           stops with the "no cargo" message instead; @arethetypeswrong/cli
#           finds no type problem in the main tarball (ESM and CJS types)
#   C       the unpacked tarball only: pkg-config, a dynamic and a static link,
#           a round trip each, the SONAME in readelf -d and ldd
#   sources the sdist and the npm main package's rust/ are loadable workspaces
#   all     every artefact says the workspace version
#
#   bash scripts/test-dist.sh          (runs scripts/dist.sh first if dist/ lacks the artefacts)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis
for tool in gcc:gcc pkg-config:pkg-config readelf:binutils; do
  command -v "${tool%%:*}" >/dev/null || apt_install "${tool#*:}"
done

VERSION=$(workspace_version)
DIST="${DIST_DIR:-$ROOT/dist}"
IFS=. read -r MAJOR MINOR PATCH <<<"${VERSION%%[-+]*}"
if [ "$MAJOR" = 0 ]; then SONAME="libechomq.so.0.$MINOR"; else SONAME="libechomq.so.$MAJOR"; fi
WHEEL=$(ls "$DIST"/echomq-"$VERSION"-cp39-abi3-*manylinux2014_x86_64*.whl 2>/dev/null || true)
NPM_MAIN="$DIST/echomq-$VERSION.tgz"
NPM_PLATFORM="$DIST/echomq-linux-x64-gnu-$VERSION.tgz"
C_TARBALL="$DIST/echomq-$VERSION-linux-x86_64.tar.gz"
if [ -z "$WHEEL" ] || [ ! -f "$NPM_MAIN" ] || [ ! -f "$NPM_PLATFORM" ] || [ ! -f "$C_TARBALL" ]; then
  bash scripts/dist.sh
  WHEEL=$(ls "$DIST"/echomq-"$VERSION"-cp39-abi3-*manylinux2014_x86_64*.whl)
fi

work="$(mktemp -d)"
cleanup() { stop_redis EMQ_URL; rm -rf "$work"; }
trap cleanup EXIT
start_redis EMQ_URL
mkdir -p "$work/home"

# The no-Rust environment. Only system directories on PATH: the Debian python3,
# node/npm, gcc, pkg-config; cargo and rustc live in ~/.cargo/bin, which is gone.
norust() {
  env -i HOME="$work/home" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 EMQ_URL="$EMQ_URL" "$@"
}
# shellcheck disable=SC2016
if ! norust sh -c '! command -v cargo && ! command -v rustc && ! command -v rustup' >/dev/null; then
  echo "test-dist: cargo/rustc are reachable from the clean PATH; the no-Rust test would prove nothing" >&2
  exit 1
fi
norust python3 -c 'import venv' 2>/dev/null || apt_install python3-venv
expect() {  # expect WHAT GOT WANTED
  if [ "$2" != "$3" ]; then echo "test-dist: $1 is '$2', expected '$3'" >&2; exit 1; fi
  printf '  %-34s %s\n' "$1" "$2"
}

say "dist test, Python: pip install --no-index $(basename "$WHEEL") into a fresh venv (no Rust)"
norust python3 -m venv "$work/venv"
norust "$work/venv/bin/python" -m pip install --disable-pip-version-check -q --no-index "$WHEEL"
py_out=$(norust "$work/venv/bin/python" tests/dist/roundtrip.py)
echo "$py_out"

say "dist test, Node: npm install --offline the main and platform tarballs into an empty project (no Rust)"
app="$work/app"
mkdir -p "$app"
echo '{"name": "app", "version": "1.0.0", "private": true}' >"$app/package.json"
(cd "$app" && norust npm install --offline --no-audit --no-fund --no-update-notifier --loglevel=error "$NPM_MAIN" "$NPM_PLATFORM")
if ls "$app"/node_modules/echomq/*.node >/dev/null 2>&1; then
  echo "test-dist: the main npm package carries a binary" >&2; exit 1
fi
[ -d "$app/node_modules/@napi-rs" ] && { echo "test-dist: build tooling was installed" >&2; exit 1; }
# Every file index.js requires, including the lazily required prom.js.
for f in $(grep -oE "require\('\./[a-z.]+'\)" bindings-node/index.js | sed -E "s/require\('\.\/(.*)'\)/\1/" | sort -u); do
  [ -f "$app/node_modules/echomq/$f" ] || [ -f "$app/node_modules/echomq/$f.js" ] \
    || { echo "test-dist: the npm package lacks $f, which index.js requires" >&2; exit 1; }
done
cp tests/dist/roundtrip.cjs tests/dist/roundtrip.mjs "$app/"
node_out=$(cd "$app" && norust node roundtrip.cjs)
echo "$node_out"
esm_out=$(cd "$app" && norust node roundtrip.mjs)
expect "node ESM protocol" "$esm_out" "echomq:2.1.0"

# The installed declarations type-check as a user compiles against them:
# index.d.ts derives Client's and Queue's plain verbs from the native.d.ts it
# ships (attw does not notice that file missing; tsc does).
say "dist test, Node: tsc --strict on a user file against the installed package"
cp tests/dist/typed.ts "$app/"
[ -f bindings-node/node_modules/typescript/bin/tsc ] \
  || (cd bindings-node && npm ci --no-audit --no-fund --loglevel=error)
(cd "$app" && node "$ROOT/bindings-node/node_modules/typescript/bin/tsc" --noEmit --strict \
  --module node16 --moduleResolution node16 --target es2022 --lib es2022,esnext.disposable \
  --types node --typeRoots "$ROOT/bindings-node/node_modules/@types" typed.ts)

# TypeScript resolves `import` to index.d.mts and `require` to index.d.ts: the
# checker, from the npm registry into a tools directory (not a dependency of
# the package), judges the tarball in every resolution mode and fails on any
# problem (e.g. "Masquerading as CJS": ESM users given the CommonJS types).
ATTW_VERSION=0.18.5
say "dist test, Node: @arethetypeswrong/cli $ATTW_VERSION on $(basename "$NPM_MAIN")"
attw_dir="$CARGO_TARGET_DIR/attw-$ATTW_VERSION"
[ -x "$attw_dir/node_modules/.bin/attw" ] || npm install --prefix "$attw_dir" --no-audit --no-fund \
  --no-update-notifier --loglevel=error "@arethetypeswrong/cli@$ATTW_VERSION"
"$attw_dir/node_modules/.bin/attw" --format table-flipped "$NPM_MAIN"

say "dist test, Node: the main package alone, without cargo, stops with a clear message"
lone="$work/lone"
mkdir -p "$lone"
echo '{"name": "lone", "version": "1.0.0", "private": true}' >"$lone/package.json"
if (cd "$lone" && norust npm install --offline --no-audit --no-fund --no-update-notifier "$NPM_MAIN") >"$work/lone.log" 2>&1; then
  echo "test-dist: installing the main package without its platform package and without cargo succeeded" >&2
  cat "$work/lone.log" >&2; exit 1
fi
grep -q 'was not found to build it from source' "$work/lone.log" \
  || { echo "test-dist: no clear message:" >&2; cat "$work/lone.log" >&2; exit 1; }
grep -o 'echomq: no prebuilt addon for [^:]*' "$work/lone.log" | head -n 1

say "dist test, C: build against the unpacked tarball with pkg-config only (no Rust)"
tar -C "$work" -xzf "$C_TARBALL"
prefix="$work/echomq-$VERSION-linux-x86_64"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pc() { norust env PKG_CONFIG_PATH="$PKG_CONFIG_PATH" pkg-config "$@"; }
CFLAGS=(-std=c11 -Wall -Wextra -Werror -pedantic)
# shellcheck disable=SC2046
norust gcc "${CFLAGS[@]}" tests/dist/roundtrip.c -o "$work/rt_shared" $(pc --cflags --libs echomq)
# shellcheck disable=SC2046
norust gcc "${CFLAGS[@]}" tests/dist/roundtrip.c -o "$work/rt_static" $(pc --cflags echomq) \
  "$prefix/lib/libechomq.a" $(pc --static --libs-only-l echomq | sed 's/-lechomq//')
readelf -d "$prefix/lib/libechomq.so.$VERSION" | grep SONAME
readelf -d "$prefix/lib/libechomq.so.$VERSION" | grep -q "Library soname: \[$SONAME\]"
readelf -d "$work/rt_shared" | grep -q "Shared library: \[$SONAME\]" \
  || { echo "test-dist: rt_shared does not record $SONAME" >&2; exit 1; }
LD_LIBRARY_PATH="$prefix/lib" ldd "$work/rt_shared" | grep "$SONAME => $prefix/lib/$SONAME" \
  || { echo "test-dist: ldd does not resolve $SONAME into the tarball" >&2; exit 1; }
if ldd "$work/rt_static" | grep -q libechomq; then
  echo "test-dist: rt_static links libechomq dynamically" >&2; exit 1
fi
c_shared=$(norust env LD_LIBRARY_PATH="$prefix/lib" "$work/rt_shared" dist-c-shared)
c_static=$(norust "$work/rt_static" dist-c-static)
echo "shared: $c_shared"
echo "static: $c_static"

say "dist test: the source fallbacks are complete workspaces (cargo metadata; building them is a full compile)"
SDIST="$DIST/echomq-$VERSION.tar.gz"
mkdir -p "$work/src"
tar -C "$work/src" -xzf "$SDIST"
tar -C "$work/src" -xzf "$NPM_MAIN"
members() {
  cargo metadata --no-deps --offline --format-version 1 --manifest-path "$1/Cargo.toml" \
    | python3 -c 'import json, sys; print(" ".join(sorted(p["name"] for p in json.load(sys.stdin)["packages"])))'
}
# The Python extension links no CLI code; the wheel ships `emq` prebuilt.
expect "sdist crates" "$(members "$work/src/echomq-$VERSION")" \
  "echomq echomq-python echomq-workspace-hack"
# Where no platform package fits, install.js builds the addon and `emq`.
expect "npm main package rust/ crates" "$(members "$work/src/package/rust")" \
  "echomq echomq-cli echomq-dashboard echomq-node echomq-workspace-hack"

# The libraries carry no CLI, terminal or HTTP code (issue #33): their
# dependency trees (checked by dist.sh) and the binaries themselves, whose
# panic locations name every crate compiled in.
say "dist test: the extension, the addon and libechomq contain no axum/clap/crossterm code"
mkdir -p "$work/wheel"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHEEL" "$work/wheel"
native_so=$(find "$work/wheel/echomq" -name '_native*.so')
for lib in "$native_so" "$app/node_modules/echomq-linux-x64-gnu/echomq.linux-x64-gnu.node" "$prefix/lib/libechomq.so.$VERSION"; do
  if grep -aoE '(axum|clap_builder|clap_lex|crossterm|echomq-cli|echomq_cli|echomq-dashboard)[-_/][a-z0-9_.]*' "$lib" | head -n 3 | grep -q .; then
    echo "test-dist: $lib contains CLI code:" >&2
    grep -aoE '(axum|clap_builder|clap_lex|crossterm|echomq_cli|echomq-dashboard)[-_/][a-z0-9_.]*' "$lib" | sort -u | head >&2
    exit 1
  fi
  awk -v f="$(basename "$lib")" -v s="$(stat -c %s "$lib")" 'BEGIN { printf "  %-64s %6.2f MB, no CLI code\n", f, s / 1048576 }'
done
# ...while the emq executable does (the check can tell the two apart).
emq_bin="$app/node_modules/echomq-linux-x64-gnu/emq"
grep -aqE 'clap_builder' "$emq_bin" || { echo "test-dist: the CLI check finds no clap in emq itself" >&2; exit 1; }

# `emq --version` names the package version and the wire: the executable the
# wheel installs and the one the npm `bin` runs are the same Rust program.
EMQ_VERSION_LINE="emq $VERSION (wire $(norust "$work/venv/bin/python" -c 'import echomq; print(echomq.PROTOCOL_VERSION)'))"
say "dist test: one version everywhere ($VERSION)"
expect "emq --version (wheel)" "$(norust "$work/venv/bin/emq" --version)" "$EMQ_VERSION_LINE"
expect "npx emq --version (npm)" "$(cd "$app" && norust ./node_modules/.bin/emq --version)" "$EMQ_VERSION_LINE"
expect "wheel file name" "$(basename "$WHEEL" | cut -d- -f2)" "$VERSION"
expect "python" "$py_out" "module=$VERSION dist=$VERSION"
expect "npm main + platform" "$node_out" "main=$VERSION platform=$VERSION"
expect "npm tarball names" "$(basename "$NPM_MAIN") $(basename "$NPM_PLATFORM")" \
  "echomq-$VERSION.tgz echomq-linux-x64-gnu-$VERSION.tgz"
expect "C shared library + header" "$c_shared" "library=$VERSION header=$VERSION macros=$MAJOR.$MINOR.$PATCH"
expect "C static library + header" "$c_static" "$c_shared"
expect "pkg-config --modversion" "$(pc --modversion echomq)" "$VERSION"
expect "C tarball name" "$(basename "$C_TARBALL")" "echomq-$VERSION-linux-x86_64.tar.gz"
say "dist test: all passed"
