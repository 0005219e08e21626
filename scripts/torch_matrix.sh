#!/usr/bin/env bash
# Check dlcprof against several torch releases, one throwaway venv each.
#
#   scripts/torch_matrix.sh [VERSION ...]     default: 2.11.0 (the GPU image's), 2.13.0
#                                             and the newest on the registry
#
# Per version: a fresh venv with that torch and dlcprof's test extras, a copy of
# this working tree (so edits made meanwhile do not leak in), the slow
# end-to-end tests, and a headless `dlcprof run` of three bundled workloads.
# Prints one line per version at the end; logs stay in $TORCH_MATRIX_DIR
# (default: a temp folder, named at the start). A CUDA build of torch pulls
# several GB of CUDA libraries even on a CPU machine: give it disk and time.
# TORCH_MATRIX_KEEP=1 keeps the venvs (a rerun then reuses them); TORCH_MATRIX_TIMEOUT
# bounds each version's test run (default 3600 s: a loaded 2-core machine needs more).
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-python3}"
root="${TORCH_MATRIX_DIR:-$(mktemp -d /tmp/dlcprof-torch-matrix.XXXXXX)}"
mkdir -p "$root"
echo "torch matrix: logs in $root" >&2

newest() {
    "$py" -m pip index versions torch 2>/dev/null | sed -n 's/^torch (\(.*\))$/\1/p' | head -1
}

versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
    versions=(2.11.0 2.13.0 "$(newest)")
fi

workloads=(pointwise-chain graph-breaks variable-length)
summary=()

check_version() {
    local v="$1" dir="$root/torch-$v" log="$root/torch-$v.log"
    local venv="$dir/venv" src="$dir/src" t0 t1
    : >"$log"
    if [ ! -x "$venv/bin/python" ]; then
        "$py" -m venv "$venv" >>"$log" 2>&1 || { echo "torch $v: cannot make a venv"; return; }
    fi
    # The registry's newest may sit above this machine's pip constraints: lift them
    # for the throwaway venv only.
    t0=$(date +%s)
    if ! PIP_CONSTRAINT=/dev/null "$venv/bin/python" -m pip install -q --no-cache-dir "torch==$v" \
        >>"$log" 2>&1; then
        echo "torch $v: install failed ($(grep -m1 -i error "$log" | cut -c1-160))"
        return
    fi
    rm -rf "$src" && mkdir -p "$src"
    # The working tree as it is now: tracked and untracked files, minus ignored ones.
    (cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf -) | tar -xf - -C "$src"
    # A checkout, as the README's clone is: `check` places annotations relative to the git root.
    git -C "$src" init -q
    if ! PIP_CONSTRAINT=/dev/null "$venv/bin/python" -m pip install -q -e "$src[test]" >>"$log" 2>&1; then
        echo "torch $v: dlcprof install failed ($(grep -m1 -i error "$log" | cut -c1-160))"
        return
    fi
    t1=$(date +%s)
    local got
    got=$("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>>"$log")
    [ -n "$got" ] || { echo "torch $v: import torch failed (see $log)"; return; }

    # The end-to-end tests, the long ones too, on a cache of this version's own.
    local cache="$dir/inductor-cache" tests
    tests=$(cd "$src" && DLCPROF_TEST_CACHE_DIR="$cache" timeout "${TORCH_MATRIX_TIMEOUT:-3600}" "$venv/bin/python" -m pytest \
        -q -m "e2e or slow" -p no:cacheprovider 2>&1 | tee -a "$log" | tail -1)

    # Headless runs: exit code and the probes that said "unavailable".
    local ok=0 notes=()
    for w in "${workloads[@]}"; do
        local out="$dir/$w.json"
        if (cd "$src" && TORCHINDUCTOR_CACHE_DIR="$cache" timeout 900 "$venv/bin/dlcprof" run "$w" \
            --size small --reps 3 --iters 5 --quiet --json "$out" >>"$log" 2>&1); then
            ok=$((ok + 1))
        else
            notes+=("$w failed")
        fi
        if [ -f "$out" ]; then
            local missing
            missing=$("$venv/bin/python" - "$out" <<'EOF'
import json, sys
events = json.load(open(sys.argv[1]))["events"]
print(",".join(sorted({e["probe"] for e in events if e["type"] == "ProbeUnavailable"})))
EOF
)
            [ -n "$missing" ] && notes+=("$w: unavailable $missing")
        fi
    done
    local extra=""
    [ ${#notes[@]} -gt 0 ] && extra="; $(IFS=';'; echo "${notes[*]}")"
    echo "torch $got: install $((t1 - t0)) s; slow tests: ${tests:-no result}; headless ${ok}/${#workloads[@]} ok${extra}"
    [ "${TORCH_MATRIX_KEEP:-0}" = 1 ] || rm -rf "$venv" "$cache"
}

for v in "${versions[@]}"; do
    [ -n "$v" ] || { summary+=("torch newest: the registry named no version"); continue; }
    echo "torch $v: started $(date +%H:%M:%S)" >&2
    line=$(check_version "$v")
    echo "$line" >&2
    summary+=("$line")
done
printf '%s\n' "${summary[@]}"
