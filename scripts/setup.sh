#!/usr/bin/env bash
# Create .venv and install dlcprof with its test extras (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# The CPU build of torch first: a bare `torch` requirement pulls a multi-GB
# CUDA build. On a GPU box, install your CUDA torch before running this.
.venv/bin/python -c 'import torch' 2>/dev/null || .venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e '.[test]'
