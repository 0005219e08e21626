"""Why a compile missed, from two sessions' cache lookups: the component that
differs, in words, never a hash; torch's cache records read; and a rank of a
job that missed where the others hit, named with why (recorded logs widened)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from helpers.torch_trace import ranked, trace_logs, widen

from dlcprof import events as ev
from dlcprof.figures.cache_misses import cache_lines, misses, saved_s
from dlcprof.figures.check.budgets import Budgets, judge
from dlcprof.figures.job.divergence import divergences
from dlcprof.figures.job.rank_runs import by_rank
from dlcprof.session import Session
from dlcprof.trace_import.job import import_trace
from dlcprof.trace_records.payloads import parse_cache_lookup

# Inductor's key components as torch logs them ("[hash] name: value"), trimmed.
COMPONENTS = [
    "[lljpfie3ukaulnyjmfdpijztsy] gm: def forward(self, arg0_1):\n"
    "    sin = torch.ops.aten.sin.default(arg0_1)\n"
    "    add = torch.ops.aten.add.Tensor(sin, 1)\n    return (add,)",
    "[2kdrtmrtmmjwm2cgaghgzoya36] example_inputs[0]: TensorMetadata(dtype=torch.float32, "
    "shape=torch.Size([4]), stride=(1,), device=device(type='cpu'), layout=torch.strided, "
    "requires_grad=False, is_quantized=False)",
    "[sjldm5hyfytkdkxlfj3fhwi432] torch_version: \ufffdM\u0010\u0007\ufffd",
    "[esstihe2nyydk4mhzpvox3qkaj] inductor_config[fallback_random]: False",
]


def record(state: str, components: list[str], **extra: object) -> str:
    key = hashlib.sha1("".join(components).encode()).hexdigest()
    return json.dumps({"key": key, "cache_state": state, "components": components, **extra})


def session(version: str, state: str, components: list[str], **extra: object) -> Session:
    s = Session()
    s.apply(
        ev.ProcessAttached(
            run_id="p1", pid=1, ppid=0, argv=["train.py"], host="h", started_t=None,
            torch_version=version, python_version="3.11", cache_dir="/kept/cache",
            cache_dir_state="filled",
        )
    )  # fmt: skip
    for name in (f"aotautograd_cache_{state}", f"fx_graph_cache_{state}"):
        lookup = parse_cache_lookup(name, record(state, components, **extra))
        s.apply(ev.CacheLookedUp(run_id="p1", compile_id="0/0", **vars(lookup)))
    return s


def run_of(s: Session):
    return s.runs["p1"]


def test_a_torch_version_change_is_named_from_two_sessions():
    base = session("2.13.0", "hit", COMPONENTS, time_saved_ns=2_000_000_000)
    other = list(COMPONENTS)
    other[2] = "[q7zzzzzzzzzzzzzzzzzzzzzzzz] torch_version: \ufffd\ufffd"
    now = session("2.15.0", "miss", other)
    (miss,) = misses(run_of(now), run_of(base))
    assert miss.causes == ["torch 2.13.0 → 2.15.0"]
    assert miss.layers == ["AOTAutograd cache", "FX graph cache"]
    assert saved_s(run_of(base)) == 2.0


def test_an_input_dtype_and_a_setting_are_named_field_by_field():
    base = session("2.13.0", "hit", COMPONENTS)
    other = list(COMPONENTS)
    other[1] = other[1].replace("[2k", "[9k").replace("float32", "bfloat16")
    other[3] = "[cev5uo2jlwdhw2uyzcm7vr6cl2] inductor_config[fallback_random]: True"
    (miss,) = misses(run_of(session("2.13.0", "miss", other)), run_of(base))
    assert miss.causes == [
        "input 0's dtype torch.float32 → torch.bfloat16",
        "Inductor setting `fallback_random` False → True",
    ]
    assert not any("esstihe" in c or "cev5" in c for c in miss.causes)


def test_the_same_key_missing_from_the_folder_is_no_changed_component():
    base = session("2.13.0", "hit", COMPONENTS)
    (miss,) = misses(run_of(session("2.13.0", "miss", COMPONENTS)), run_of(base))
    assert miss.causes[0].startswith("the same key as the baseline's, yet not in the cache folder")


def test_one_run_alone_names_a_new_folder():
    s = session("2.13.0", "miss", COMPONENTS)
    s.runs["p1"].process.cache_dir_state = "missing"
    (miss,) = misses(run_of(s))
    assert miss.causes == [
        "a new cache folder (cold): this run's TORCHINDUCTOR_CACHE_DIR did not exist (/kept/cache)"
    ]


def test_a_bypass_keeps_its_reason_and_is_no_miss():
    lookup = parse_cache_lookup(
        "fx_graph_cache_bypass",
        json.dumps(
            {"cache_state": "bypass", "cache_bypass_reason": "Can't cache HigherOrderOperators."}
        ),
    )
    assert (lookup.layer, lookup.state, lookup.reason) == (
        "fx_graph", "bypass", "Can't cache HigherOrderOperators."
    )  # fmt: skip
    s = Session()
    s.apply(ev.CacheLookedUp(run_id="p1", compile_id="0/0", **vars(lookup)))
    assert misses(s.runs["p1"]) == []


def finished(s):
    s.apply(
        ev.CompileFinished(
            run_id="p1", compile_id="0/0", wall_s=1.0, start_t=0.0, is_backward=False,
            recompile_reason=None, fail_type=None, fail_reason=None, graph_op_count=2,
            guard_count=3, cache=None, metrics={},
        )
    )  # fmt: skip
    return s


def test_each_layer_of_a_compile_is_worded_with_what_its_hit_saved_and_its_builds():
    s = session("2.13.0", "hit", COMPONENTS, time_saved_ms=20037.0)
    hit = "caches: AOTAutograd cache hit (saved 20.04 s) · FX graph cache hit (saved 20.04 s) · "
    # In progress, a compile may build more; once finished, none is none.
    assert cache_lines(run_of(s), "0/0") == [hit + "kernel builds: none yet"]
    assert cache_lines(run_of(finished(s)), "0/0") == [hit + "kernel builds: none"]
    missed = session("2.13.0", "miss", COMPONENTS)
    missed.runs["p1"].process.cache_dir_state = "empty"
    for start, seconds in ((1.0, 0.5), (2.0, 1.0)):  # two modules built, not found
        missed.apply(
            ev.PhaseEnded(
                run_id="p1", compile_id="0/0", name="compile_file", thread=1,
                start_t=start, duration_s=seconds,
            )
        )  # fmt: skip
    assert cache_lines(run_of(finished(missed)), "0/0") == [
        "caches: AOTAutograd cache miss · FX graph cache miss · kernel builds: 2 (1.50 s)",
        "why it missed: an empty cache folder (cold) (/kept/cache)",
    ]


def test_a_gate_on_a_run_whose_lookups_were_not_seen_fails_as_unknown():
    s = Session()
    s.apply(
        ev.CompileFinished(
            run_id="p1", compile_id="0/0", wall_s=1.0, start_t=0.0, is_backward=False,
            recompile_reason=None, fail_type=None, fail_reason=None, graph_op_count=2,
            guard_count=3, cache=None, metrics={},
        )
    )  # fmt: skip
    counts, violations = judge(s.runs["p1"], Budgets(cache_misses=0), "")
    assert [c.value for c in counts] == [0]
    (v,) = violations
    assert v.message.startswith("cache misses n/a: torch logged no cache lookup for its 1 graph")


def wide_job(tmp_path: Path, odd: str, ranks: int = 4) -> Session:
    """cache_key.py's recorded logs as one job: every rank the run whose g's
    setting changed (f hit, g missed), rank 2 the run ``odd`` names."""
    logs = {
        n: ranked(next(trace_logs(f"cache_key/{n}", tmp_path / n).glob("*.log")))
        for n in ("setting", odd)
    }
    wide = widen({0: logs["setting"], 1: logs[odd]}, tmp_path / "wide", ranks, {2: 1})
    return import_trace([str(wide)], workers=1)


def cache_divergence(session: Session):
    (d,) = [d for d in divergences(session) if d.check == "cache"]
    return d


def test_a_rank_that_missed_where_the_others_hit_is_named_with_the_changed_graph(tmp_path):
    d = cache_divergence(wide_job(tmp_path, "graph"))
    assert d.rank == 2
    assert d.headline.startswith(
        "rank 2 missed the AOTAutograd cache and the FX graph cache on 0/0 where the others "
        "hit: the graph changed: 1 op more (1 → 2) (cache folders not recorded"
    )


def test_a_rank_whose_cache_folder_was_new_is_named_cold_on_separate_caches(tmp_path):
    session = wide_job(tmp_path, "base")
    # What the probe of a live rank records of its folder (an import knows none).
    for rank, run in by_rank(session).items():
        run.process.cache_dir = f"/cache/rank{rank}"
        run.process.cache_dir_state = "missing" if rank == 2 else "filled"
    d = cache_divergence(session)
    assert (d.rank, d.alarm) == (2, True)
    assert d.headline.startswith(
        "rank 2 missed the AOTAutograd cache and the FX graph cache on 0/0 where the others "
        "hit: a new cache folder (cold): this run's TORCHINDUCTOR_CACHE_DIR did not exist "
        "(/cache/rank2) (separate caches:"
    )


def test_the_same_key_on_a_rank_with_no_folder_recorded_is_said_so(tmp_path):
    d = cache_divergence(wide_job(tmp_path, "base"))
    assert "where the others hit: the same key as rank 0's, yet not in the cache folder" in (
        d.headline
    )
