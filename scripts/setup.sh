#!/usr/bin/env bash
# Create .venv and install dlcprof with its test extras (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned, unless .venv has one: the build is whichever pip finds
# (PyPI's Linux wheel is the multi-GB CUDA build; a CPU index gives the CPU
# one). Install the torch you want into .venv first to choose (README.md).
.venv/bin/python -c 'import torch' 2>/dev/null || .venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e '.[test]'
# dlcprof's bytecode, written once: with PYTHONDONTWRITEBYTECODE set (as in some
# containers) every process would compile the editable sources again.
.venv/bin/python -m compileall -q dlcprof >/dev/null
