#!/usr/bin/env bash
# The device plan: dlcprof's GPU paths on a real NVIDIA GPU, in under 8 minutes
# (docs/gpu-check.md says how to run it on a lent machine).
#
#   bash scripts/gpu_check.sh [--device cuda|cpu] [OUT_DIR]
#   bash scripts/gpu_check.sh --ranks [--device cuda|cpu] [OUT_DIR]   # NEEDS 2 GPUs
#
# --ranks runs only the many-ranks plan instead (docs/gpu-check.md): a torchrun
# job of 2 ranks, one GPU each, on NCCL, under `dlcprof run --` (the DDP split,
# then one rank diverging); it needs 2 GPUs and stops with exit 2 on fewer.
# With --device cpu it rehearses the same on gloo.
#
# 1. Python: $PYTHON, else the image's `python3` when it imports torch, else
#    this checkout's .venv. dlcprof runs from the checkout (PYTHONPATH), never
#    `pip install -e .` (which would fetch another torch). Packages it lacks
#    (textual, py-spy: scripts/fetch_gpu_wheels.sh put them in .whl/) are
#    installed with --no-index --no-deps into a folder outside OUT_DIR.
# 2. `dlcprof run --mode all` on gelu-mlp (two matmuls: the autotune table)
#    and pointwise-chain (one fused kernel: CUDA graphs pay most), on fresh
#    Inductor and Triton caches kept in a work folder, not in OUT_DIR.
# 3. The device monitors alone (scripts/gpu_monitor_check.py; cuda only), then an
#    attached program (`dlcprof run -- python tests/programs/train.py`; cuda only).
# 4. scripts/gpu_check.py checks the saved sessions and prints the table to paste.
#
# OUT_DIR receives at most 8 files: summary.txt (the table and each failure),
# one log per step (attached.log too), the two session JSONs, and fixtures.tar.gz (the kineto
# trace each profiled mode exported and each compiled graph's output code,
# for tests/fixtures/gpu). --device cpu: the same plan on the CPU (a rehearsal:
# pointwise-chain, small, no monitor check). Exit 2: no GPU (cuda) or no torch; 1: a check
# failed.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
DEVICE=cuda
RANKS=0
if [ "${1:-}" = "--ranks" ]; then RANKS=1; shift; fi
if [ "${1:-}" = "--device" ]; then DEVICE=${2:?--device cuda|cpu}; shift 2; fi
OUT=${1:-${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/dlcprof-gpu-check-XXXXXX")}}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dlcprof-gpu-work-XXXXXX")  # caches and reports: never in OUT
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)
say() { echo "gpu_check [$(($(date +%s) - start)) s]: $*" | tee -a "$OUT/summary.txt"; }
: >"$OUT/summary.txt"

if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif python3 -c 'import torch' 2>/dev/null; then PY=python3
else PY="$repo/.venv/bin/python"
fi
case $PY in  # it runs from WORK: a relative path made absolute
    */*) d=$(cd "$(dirname "$PY")" 2>/dev/null && pwd) && PY="$d/$(basename "$PY")" ;;
esac
if ! torch_line=$("$PY" -W ignore -c 'import sys, torch; print(sys.version.split()[0],
    torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>"$WORK/torch.err"); then
    say "no torch in $PY: $(tail -1 "$WORK/torch.err")"
    exit 2
fi
say "$PY: python, torch, CUDA, GPU seen: $torch_line"
if [ "$DEVICE" = cuda ] && [ "${torch_line##* }" != True ]; then
    say "torch in $PY sees no CUDA device: run with --device cpu for the rehearsal"
    exit 2
fi

# Carried wheels: installed into a folder of their own, first on PYTHONPATH.
SITE="$WORK/site"
if ! "$PY" -c 'import textual' 2>/dev/null || ! command -v py-spy >/dev/null; then
    if ls "$repo"/.whl/*.whl >/dev/null 2>&1; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$SITE" "$repo"/.whl/*.whl >"$OUT/install.log" 2>&1 ||
            { say "installing .whl/ failed: $(tail -1 "$OUT/install.log")"; exit 1; }
        rm -f "$OUT/install.log"
    else
        say "no .whl/: textual or py-spy missing (run scripts/fetch_gpu_wheels.sh here first)"
    fi
fi
export PYTHONPATH="$repo:$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$SITE/bin:$PATH"
export TORCHINDUCTOR_CACHE_DIR="$WORK/inductor-cache" TRITON_CACHE_DIR="$WORK/triton-cache"
export DLCPROF_GPU_TRACE_DIR="$WORK/fixtures" PYTHONUNBUFFERED=1
say "py-spy: $(command -v py-spy || echo 'not found'); textual: $("$PY" -c \
    'import importlib.metadata as m; print(m.version("textual"))' 2>&1 | tail -1)"
[ "$DEVICE" = cuda ] && nvidia-smi --query-gpu=name,driver_version,memory.total \
    --format=csv,noheader 2>&1 | head -1 | while read -r l; do say "GPU: $l"; done

# The many-ranks plan (--ranks, NEEDS 2 GPUs): two torchrun jobs of 2 ranks
# under `dlcprof run --`, 240 s each at most, then gpu_ranks_check.py reads
# their sessions. OUT_DIR gets summary.txt and one log per job.
if [ "$RANKS" = 1 ]; then
    if [ "$DEVICE" = cuda ]; then
        gpus=$("$PY" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null)
        if [ "${gpus:-0}" -lt 2 ]; then
            say "the many-ranks plan needs 2 GPUs; ${gpus:-0} seen"
            exit 2
        fi
        job_args=(--device cuda --backend nccl)
    else
        job_args=(--device cpu --backend gloo)
        export TORCHINDUCTOR_CACHE_DIR="${TMPDIR:-/tmp}/dlcprof-gpu-check-cpu-cache"
    fi
    for job in split diverge; do
        case $job in
            split) extra=(--width 512 --depth 4 --bucket-cap-mb 1 --steps 3) ;;
            diverge) extra=(--diverge-rank 1 --steps 4) ;;
        esac
        say "2 ranks ($job): torchrun ddp_train.py ${job_args[*]} ${extra[*]}"
        (cd "$WORK" && timeout -k 10 240 "$PY" -m dlcprof.cli run --json "$WORK/ranks-$job.json" \
            -- "$PY" -m torch.distributed.run --standalone --nproc-per-node 2 \
            "$repo/tests/programs/ddp_train.py" "${job_args[@]}" "${extra[@]}") \
            >"$OUT/ranks-$job.log" 2>&1 || say "the $job job failed or timed out (see ranks-$job.log)"
    done
    say "runs took $(($(date +%s) - start)) s"
    "$PY" "$repo/scripts/gpu_ranks_check.py" --device "$DEVICE" "$WORK/ranks-split.json" \
        "$WORK/ranks-diverge.json" 2>&1 | tee -a "$OUT/summary.txt"
    exit "${PIPESTATUS[0]}"
fi

# Sizing: on the GPU, default sizes, fresh caches (max-autotune really
# benchmarks) and enough timed calls for NVML's utilization window to see the
# benchmark; 2 x 150 s + 90 s leave the 8 minutes a margin. On the CPU, a
# rehearsal of the same path: one workload, small, on a cache kept between
# rehearsals (outside OUT_DIR too).
if [ "$DEVICE" = cuda ]; then
    ITERS=${ITERS:-1000} REPS=${REPS:-7} SIZE=default RUN_TIMEOUT=${RUN_TIMEOUT:-150}
    WORKLOADS=(gelu-mlp pointwise-chain)
else
    ITERS=${ITERS:-20} REPS=${REPS:-3} SIZE=small RUN_TIMEOUT=${RUN_TIMEOUT:-400}
    WORKLOADS=(pointwise-chain)
    export TORCHINDUCTOR_CACHE_DIR="${TMPDIR:-/tmp}/dlcprof-gpu-check-cpu-cache"
fi
for workload in "${WORKLOADS[@]}"; do
    say "$workload --mode all --device $DEVICE"
    if ! (cd "$WORK" && timeout -k 10 "$RUN_TIMEOUT" "$PY" -m dlcprof.cli run "$workload" \
        --mode all --device "$DEVICE" --size "$SIZE" --iters "$ITERS" --reps "$REPS" --quiet \
        --report "$WORK/$workload") >"$OUT/$workload.log" 2>&1; then
        say "dlcprof run $workload failed or timed out (see $workload.log)"
    fi
    # The report folder is written even for a failed run: check what it holds.
    # A file over 16 MiB would not come back: such a session travels gzipped.
    session="$WORK/$workload/session.json"
    if [ -f "$session" ] && [ "$(stat -c %s "$session")" -lt $((15 << 20)) ]; then
        cp "$session" "$OUT/$workload.session.json"
    elif [ -f "$session" ]; then
        gzip -c "$session" >"$OUT/$workload.session.json.gz"
    fi
done

if [ "$DEVICE" = cuda ]; then
    say "device monitors alone (gpu_monitor_check.py)"
    timeout -k 10 90 "$PY" "$repo/scripts/gpu_monitor_check.py" --seqs 256 --bench-s 3 \
        --timeout 75 >"$OUT/monitors.log" 2>&1 || say "gpu_monitor_check failed (see monitors.log)"
fi

# An attached program (docs/attach.md): the tests' training script on CUDA
# under `dlcprof run --`; its compiles must carry Triton kernels (5 steps: each
# graph runs the calls kernel sampling needs; how many were timed is said), and the
# device sampler on its process must have read NVML's utilization. One more log
# in OUT (the 8th file); its session stays in WORK.
if [ "$DEVICE" = cuda ]; then
    say "attached program: tests/programs/train.py --device cuda"
    (cd "$WORK" && timeout -k 10 90 "$PY" -m dlcprof.cli run --quiet --json "$WORK/attached.json" \
        -- "$PY" "$repo/tests/programs/train.py" --device cuda --steps 5) >"$OUT/attached.log" 2>&1
    "$PY" -c 'import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
kernels = [k for r in runs for c in r["compiles"] for k in c["kernels"]]
names = [k["name"] for k in kernels]
ok = any(n.startswith("triton_") for n in names)
timed = sum(k["time_ms"] is not None for k in kernels if k["name"].startswith("triton_"))
nvml = any(r["device"]["monitors"].get("nvml", {}).get("available") for r in runs)
util = sum(r["device"]["metrics"].get("gpu_util_pct", {}).get("count", 0) for r in runs)
print(f"attached program: {len(names)} kernels, Triton kernels: {ok}, {timed} of them timed, "
      f"NVML available: {nvml}, GPU utilization samples: {util}")
sys.exit(0 if ok and nvml and util else 1)' "$WORK/attached.json" >>"$OUT/attached.log" 2>&1 &&
        say "$(tail -1 "$OUT/attached.log")" || say "attached program failed (see attached.log)"
fi

if [ -d "$WORK/fixtures" ]; then
    tar -czf "$OUT/fixtures.tar.gz" -C "$WORK/fixtures" .
fi
say "runs took $(($(date +%s) - start)) s"
"$PY" "$repo/scripts/gpu_check.py" --device "$DEVICE" --gemm gelu-mlp --fixtures "$WORK/fixtures" \
    "${WORKLOADS[@]/#/$WORK/}" 2>&1 | tee -a "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
say "done; $(ls "$OUT" | wc -l) files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
exit "$rc"
