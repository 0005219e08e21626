#!/usr/bin/env bash
# Build the wheel and run it from a throwaway venv: CI otherwise installs
# editable only, which hides a package missing from the wheel.
# The throwaway venv reaches .venv's dependencies (torch, textual...) through a
# .pth line instead of downloading them again; that line does not process
# .venv's own .pth files, so dlcprof is imported from the wheel, not the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Built from a copy of the files git would ship: a stale build/ folder in the tree
# would put back a package the configuration misses.
mkdir "$tmp/src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [ ! -e "$f" ] || cp --parents "$f" "$tmp/src"  # a tracked file deleted here is skipped
done
.venv/bin/python -m pip wheel --no-deps --no-build-isolation -w "$tmp/dist" "$tmp/src" \
    >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
# setuptools' warnings (a data folder it takes for a package left out, a
# deprecated setting) are a configuration to fix, not a screenful to scroll past.
if grep -n "Warning" "$tmp/build.log" >&2; then
    echo "the wheel built with setuptools warnings (above)" >&2
    exit 1
fi
.venv/bin/python -m venv --without-pip "$tmp/venv"
deps=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
echo "$deps" > "$site/dlcprof-deps.pth"
.venv/bin/python -m pip --python "$tmp/venv/bin/python" install -q --no-deps "$tmp"/dist/*.whl
cd "$tmp"  # away from the source tree, which would shadow the wheel
where=$(venv/bin/python -c 'import dlcprof; print(dlcprof.__file__)')
case "$where" in "$tmp"/venv/*) ;; *) echo "dlcprof imported from $where, not the wheel" >&2; exit 1;; esac
# Every file the tree ships under dlcprof/ (and workloads/ as dlcprof/bundled).
venv/bin/python - "$tmp/src" "$site" <<'PY'
import sys
from pathlib import Path

src, site = map(Path, sys.argv[1:])
missing = [
    f"{pkg}/{f.relative_to(src / folder)}"
    for folder, pkg in (("dlcprof", "dlcprof"), ("workloads", "dlcprof/bundled"))
    for f in (src / folder).rglob("*")
    if f.is_file() and not (site / pkg / f.relative_to(src / folder)).is_file()
]
if missing:
    sys.exit("missing from the wheel: " + ", ".join(sorted(missing)))
PY
venv/bin/dlcprof list
venv/bin/dlcprof doctor
echo "wheel ok: dlcprof list and dlcprof doctor ran from the installed wheel"
