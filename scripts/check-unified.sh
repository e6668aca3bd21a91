#!/usr/bin/env bash
# The Python extension, the Node addon, the C library and `emq` resolve one
# feature set for every dependency they share, so a build of all four (the
# demo, dist.sh) compiles the core and its dependencies once, not four times.
# Cargo resolves features per build, so this holds only while
# workspace-hack/Cargo.toml asks for the union; this check fails when a new
# dependency or feature splits them, and prints the line to add there.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PACKAGES=(echomq-python echomq-node echomq-ffi echomq-cli)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for p in "${PACKAGES[@]}"; do
  # Every crate of the build (normal and build/proc-macro edges) with the
  # features this selection gives it.
  cargo tree -q -p "$p" -e normal,build --prefix none -f '{p} {f}' --target x86_64-unknown-linux-gnu \
    | sed -e 's/ (\*)//' -e 's/ (proc-macro)//' | sort -u >"$dir/$p"
done
python3 - "$dir" "${PACKAGES[@]}" <<'EOF'
import sys
from collections import defaultdict
folder, packages = sys.argv[1], sys.argv[2:]
features = defaultdict(dict)  # "name vX" -> package -> set of features
for p in packages:
    for line in open(f"{folder}/{p}"):
        parts = line.split()
        if len(parts) < 2 or parts[0].startswith("echomq"):
            continue
        crate = f"{parts[0]} {parts[1]}"
        features[crate].setdefault(p, set()).update(parts[2].split(",") if len(parts) > 2 else [])
split = 0
for crate, by_package in sorted(features.items()):
    sets = list(by_package.values())
    union = set().union(*sets)
    if any(s != union for s in sets):
        split += 1
        short = {p: sorted(union - s) for p, s in by_package.items() if union - s}
        print(f"check-unified: {crate} gets different features per package; missing {short}; "
              f"ask for {sorted(union)} in workspace-hack/Cargo.toml", file=sys.stderr)
shared = sum(1 for v in features.values() if len(v) > 1)
if split:
    sys.exit(1)
print(f"check-unified: {shared} shared dependencies resolve one feature set in {', '.join(packages)}")
EOF
