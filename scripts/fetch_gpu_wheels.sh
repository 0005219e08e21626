#!/usr/bin/env bash
# Download the wheels the GPU image lacks into .whl/ (git-ignored), for
# scripts/gpu_check.sh to install there: that machine has no network.
#
#   bash scripts/fetch_gpu_wheels.sh
#
# The image (docs/gpu-check.md) has python 3.12, torch 2.11, triton, rich,
# jinja2, psutil, pygments, markdown-it-py, nvidia-ml-py; not textual, not
# py-spy. Versions are the ones this checkout's venv runs its tests with;
# rich, pygments and markdown-it-py travel too: textual 8 needs newer ones
# than the image may have. cp312 manylinux x86-64 wheels, no dependencies resolved (each named).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
WHEELS=(
    textual==8.2.8 rich==15.0.0 mdit-py-plugins==0.7.0 linkify-it-py==2.2.0
    platformdirs==4.14.9 pygments==2.21.0 markdown-it-py==4.3.0 py-spy==0.4.3
)
mkdir -p .whl
rm -f .whl/*.whl
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 \
    manylinux_2_5_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
done
PIP_CONSTRAINT=/dev/null "$PY" -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp "${platforms[@]}" -d .whl "${WHEELS[@]}"
bytes=$(du -cb .whl/*.whl | tail -1 | cut -f1)
# What travels: the checkout's tracked and untracked files plus .whl (64 MiB at most).
tree=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- | tail -1 | cut -f1)
echo "fetch_gpu_wheels: $(ls .whl | wc -l) wheels, $((bytes >> 10)) KiB; with the checkout $(((bytes + tree) >> 20)) MiB of 64 MiB"
[ $((bytes + tree)) -lt $((64 << 20)) ] || { echo "fetch_gpu_wheels: over the 64 MiB a run may carry" >&2; exit 1; }
