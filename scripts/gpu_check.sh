#!/usr/bin/env bash
# The GPU side of the modes, on a real NVIDIA GPU (under 8 minutes on one H200).
#
#   bash scripts/gpu_check.sh [OUT_DIR]
#
# `dlcprof run --mode all --device cuda` on two bundled workloads, each mode in
# its own worker, on a fresh Inductor cache (so max-autotune really benchmarks
# its Triton GEMM configs): gelu-mlp (two matmuls: the autotune table) and
# pointwise-chain (one fused Triton kernel: the CUDA graphs pay most). Then
# scripts/gpu_check.py checks the saved sessions: Triton kernel names, NVML
# utilization > 0 during the benchmark, a non-empty autotune table under
# max-autotune, a CUDA-graph status under reduce-overhead, the saved report;
# and prints a table to paste. Exit 2: no GPU here; 1: a check failed.
#
# Sizing: default sizes and enough timed calls (ITERS x REPS, per mode) for
# NVML's utilization window to see the benchmark; RUN_TIMEOUT caps each
# workload's four runs.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/dlcprof-gpu-check-XXXXXX")}
ITERS=${ITERS:-1000}
REPS=${REPS:-7}
RUN_TIMEOUT=${RUN_TIMEOUT:-220}

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi not found)" >&2
    exit 2
fi
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "gpu_check: torch in $PY sees no CUDA device: install a CUDA build of torch into .venv" >&2
    exit 2
fi
mkdir -p "$OUT"
# Fresh caches: every compile and every autotune is real, none read from disk.
export TORCHINDUCTOR_CACHE_DIR="$OUT/inductor-cache"
export TRITON_CACHE_DIR="$OUT/triton-cache"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

start=$(date +%s)
for workload in gelu-mlp pointwise-chain; do
    echo "gpu_check: $workload --mode all --device cuda ($(( $(date +%s) - start )) s so far)"
    if ! timeout "$RUN_TIMEOUT" "$PY" -m dlcprof.cli run "$workload" --mode all --device cuda \
        --iters "$ITERS" --reps "$REPS" --quiet --report "$OUT/$workload" \
        >"$OUT/$workload.txt" 2>&1; then
        echo "gpu_check: dlcprof run $workload failed or timed out; its output ends:" >&2
        tail -40 "$OUT/$workload.txt" >&2
        # The report folder is written even for a failed run: check what it holds.
    fi
done
# One attached program (docs/attach.md): the test's training script on CUDA
# under `dlcprof run --`; its compiles must carry Triton kernels.
echo "gpu_check: attached program, tests/programs/train.py --device cuda"
timeout "$RUN_TIMEOUT" "$PY" -m dlcprof.cli run --quiet --json "$OUT/attached.json" -- \
    "$PY" tests/programs/train.py --device cuda >"$OUT/attached.txt" 2>&1 || true
"$PY" -c 'import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
names = [k["name"] for r in runs for c in r["compiles"] for k in c["kernels"]]
ok = any(n.startswith("triton_") for n in names)
print(f"gpu_check: attached program: {len(names)} kernels, Triton: {ok}")
sys.exit(0 if ok else 1)' "$OUT/attached.json"
echo "gpu_check: runs took $(( $(date +%s) - start )) s; output in $OUT"
"$PY" scripts/gpu_check.py "$OUT/gelu-mlp" "$OUT/pointwise-chain" --gemm gelu-mlp
