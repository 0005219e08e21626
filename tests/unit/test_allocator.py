"""The speedup twice (glibc's default allocator, then held steady), the page
faults behind the difference, and repetitions that split into two clusters.

The cluster detector is checked on repetition values recorded from real runs
(tests/fixtures/repetitions.json); the end-to-end tests run real workers.
"""

from __future__ import annotations

import json

import pytest
from helpers.paths import FIXTURES

from dlcprof import allocator, text
from dlcprof import events as ev
from dlcprof.doctor import allocator_check
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.stats import median_iqr
from dlcprof.worker import bench, steady

REPS = json.loads((FIXTURES / "repetitions.json").read_text())
RECORDED = {k: v for k, v in REPS.items() if not k.startswith("_")}


@pytest.mark.parametrize("name", RECORDED)
def test_clusters_in_recorded_repetitions(name):
    rec = RECORDED[name]
    c = fb.two_clusters(rec["ms"])
    got = None if c is None else [len(c.fast), len(c.slow)]
    assert got == rec["clusters"], rec["source"]
    if c is not None:
        assert max(rec["ms"][i] for i in c.fast) < min(rec["ms"][i] for i in c.slow)


def _bench(eager: dict, compiled: dict, **kw) -> ev.BenchmarkMeasured:
    """A benchmark event around recorded repetitions (medians as the worker takes them)."""
    e, es = median_iqr(eager["ms"])
    c, cs = median_iqr(compiled["ms"])
    fields = dict(
        run_id="r",
        eager_ms=e,
        compiled_ms=c,
        eager_spread_ms=es,
        compiled_spread_ms=cs,
        reps=len(eager["ms"]),
        iters=20,
        warmup=5,
        compile_s=2.0,
        threads=1,
        load_avg=[],
        timer="perf_counter",
        eager_reps_ms=eager["ms"],
        compiled_reps_ms=compiled["ms"],
        eager_faults=eager["faults"],
        compiled_faults=compiled.get("faults") or [],
    )
    return ev.BenchmarkMeasured(**{**fields, **kw})


def test_page_faults_tell_the_allocator_from_background_load():
    allocator_split = _bench(
        RECORDED["pointwise_default_eager"], RECORDED["pointwise_default_compiled"]
    )
    (note,) = fb.split_notes(allocator_split, fb.speed(allocator_split))
    assert note.startswith("eager repetitions in two clusters: 5 near 40.7 ms, 2 near 52.7 ms")
    assert "page faults per call 892 vs 2,612: the allocator" in note
    load_split = _bench(RECORDED["swish_load_shift_eager"], RECORDED["swish_unimodal_eager"])
    (note,) = fb.split_notes(load_split, fb.speed(load_split))
    assert "4,265 vs 4,265: not the allocator" in note


def test_a_balanced_split_states_both_figures_and_no_median():
    # Eager: four repetitions near 0.03 ms and three near 0.37 ms, so the median
    # (0.0303) sits at the edge of one cluster and could land in the other on a
    # rerun. Compiled: two stalled repetitions of seven (the median stands).
    b = _bench(
        RECORDED["pointwise_small_stalls_eager"], RECORDED["pointwise_small_stalls_compiled"]
    )
    s = fb.speed(b)
    assert s.eager_split is not None and s.eager_split.balanced and len(s.modes) == 2
    low, high = (m.speedup for m in s.modes)
    assert low < high
    assert fb.speedup_text(s) == f"{text.speedup(low)} or {text.speedup(high)} (" + (
        f"{text.TWO_CLUSTERS})"
    )
    assert text.speedup(s.speedup) not in fb.speedup_text(s)
    # Within the spread in one pairing, measurably faster in the other.
    assert [m.verdict for m in s.modes] == [fb.SAME, fb.FASTER] and s.verdict == fb.MIXED
    assert s.break_even is None
    assert fb.break_even_text(s).startswith(f"{text.na(text.NO_DIFFERENCE)} or ")
    # Two stalled repetitions of seven leave the median to the larger cluster.
    b = _bench(RECORDED["pointwise_default_eager"], RECORDED["pointwise_small_stalls_compiled"])
    s = fb.speed(b)
    assert s.eager_split and s.compiled_split and not s.modes
    assert fb.speedup_text(s) == text.speedup_verdict(s.speedup, s.measurable)
    assert all("the median is the larger cluster's" in n for n in fb.split_notes(b, s))


def _steady(b: ev.BenchmarkMeasured, scale_eager: float, faults: float) -> ev.Event:
    return ev.SteadyAllocatorMeasured(
        run_id="r",
        how="pinned",
        eager_ms=b.eager_ms * scale_eager,
        compiled_ms=b.compiled_ms,
        eager_spread_ms=0.01 * b.eager_ms * scale_eager,
        compiled_spread_ms=b.compiled_spread_ms,
        reps=b.reps,
        iters=b.iters,
        warmup=5,
        wall_s=1.0,
        eager_faults=[faults] * b.reps,
        compiled_faults=[0.0] * b.reps,
    )


@pytest.mark.parametrize(
    ("scale", "steady_faults", "verdict"),
    [
        (0.4, 10.0, fa.SENSITIVE),  # eager 2.5x faster once its pages stay mapped
        (0.99, 10.0, fa.NOT_SENSITIVE),  # within the spread
        (0.4, 2000.0, fa.NOT_ALLOCATOR),  # apart, but the faults did not move
    ],
)
def test_allocator_verdict(scale, steady_faults, verdict):
    # Made-up repetitions with the recorded pointwise-chain's shape (issue 14).
    b = _bench(
        {"ms": [24.0, 24.2, 23.9, 24.1, 24.3, 24.0, 24.1], "faults": [2000.0] * 7},
        {"ms": [4.8, 4.9, 4.7, 4.8, 5.0, 4.8, 4.9], "faults": [0.0] * 7},
    )
    session = Session.from_events([b, _steady(b, scale, steady_faults)])
    a = fa.contrast(session.latest_run)
    assert a is not None and a.steady is not None and a.verdict == verdict
    assert a.sentence.startswith(verdict)
    assert a.break_evens[0] is not None and a.break_evens[1] is not None


def test_a_run_without_the_steady_figure_says_why():
    b = _bench(RECORDED["pointwise_steady_eager"], RECORDED["pointwise_default_compiled"])
    why = "on CUDA, tensors come from PyTorch's caching allocator, not from malloc"
    session = Session.from_events(
        [b, ev.ProbeUnavailable(run_id="r", probe="steady_allocator", reason=why)]
    )
    a = fa.contrast(session.latest_run)
    assert a is not None and a.steady is None and a.verdict is None and a.sensitive is None
    assert a.sentence == f"{text.STEADY_ALLOC}: {text.na(why)}"
    assert [label for label, _ in fa.rows(a)][-1] == "page faults/call"
    assert all(cells[1] == text.NA for _, cells in fa.rows(a))


def test_which_malloc(monkeypatch):
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    for k in allocator.STEADY_ENV:
        monkeypatch.delenv(k, raising=False)
    m = allocator.current()
    assert m.name == "glibc" and not m.steady and m.label.endswith("default thresholds")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "")  # glibc reads it as 0
    m = allocator.current()
    assert not m.steady and m.label.endswith("MALLOC_MMAP_THRESHOLD_=''")
    for k, v in allocator.STEADY_ENV.items():
        monkeypatch.setenv(k, v)
    assert allocator.current().steady
    monkeypatch.setenv("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
    assert allocator.current().label == "jemalloc (preloaded)"


def test_doctor_says_what_holds_the_allocator_steady():
    glibc = allocator.Malloc("glibc", "2.36")
    found = {"tcmalloc": "/usr/lib/libtcmalloc_minimal.so.4"}
    c = allocator_check(glibc, found)
    assert c.status == "warn" and "default thresholds" in c.detail
    assert "MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824" in c.cost
    assert "LD_PRELOAD=/usr/lib/libtcmalloc_minimal.so.4" in c.cost
    pinned = allocator.Malloc("glibc", "2.36", tuple(allocator.STEADY_ENV.items()))
    assert allocator_check(pinned, {}).status == "ok"
    jemalloc = allocator_check(allocator.Malloc("jemalloc", "2.36"), {})
    assert jemalloc.status == "warn" and "dirty_decay_ms:-1" in jemalloc.cost


def test_the_steady_measurement_is_skipped_where_it_cannot_mean_anything(monkeypatch):
    def never(*args):
        raise AssertionError("called")

    def why(settings: RunSettings, device: str = "cpu") -> str:
        with pytest.raises(steady.NotMeasured) as e:
            steady.measure("r", never, never, (), settings, bench.Timer(device))
        return str(e.value)

    plain = RunSettings(target="pointwise-chain")
    assert "caching allocator" in why(plain, "cuda")
    assert "sweeps shapes next" in why(RunSettings(target="pointwise-chain", sweep=True))
    for k, v in allocator.STEADY_ENV.items():
        monkeypatch.setenv(k, v)
    assert "held steady already" in why(plain)
    monkeypatch.setenv("LD_PRELOAD", "libtcmalloc_minimal.so.4")
    assert "mallopt pins glibc's malloc only" in why(plain)


@pytest.mark.parametrize(
    ("steady_eager", "verdict"), [(9.0, fa.SENSITIVE), (30.0, fa.NOT_SENSITIVE)]
)
def test_a_split_default_is_compared_cluster_by_cluster(steady_eager, verdict):
    # Made-up repetitions: eager in two clusters (24 and 50 ms), compiled ~4.8 ms.
    b = _bench(
        {"ms": [24.0, 24.1, 50.0, 23.9, 50.2, 49.8, 50.1], "faults": [2000.0] * 7},
        {"ms": [4.8, 4.9, 4.7, 4.8, 5.0, 4.8, 4.9], "faults": [0.0] * 7},
    )
    d = fb.speed(b)
    assert len(d.modes) == 2
    st = _steady(b, steady_eager / b.eager_ms, 10.0)
    a = fa.contrast(Session.from_events([b, st]).latest_run)
    # 9 ms is below both clusters' speedups (5.0x and 10.4x); 30 ms lies between them.
    assert a is not None and a.verdict == verdict


# A Hugging Face ResNet's repetitions in a load phase (issue 40, item 9): the
# clusters' medians as recorded (eager 8.88 / 13.40 ms, compiled 9.53 / 13.85 ms),
# the repetitions around them as a loaded machine scatters them. Each repetition
# times eager then compiled back to back: the first five ran under the load.
RESNET_EAGER = [13.40, 12.70, 14.05, 13.10, 13.85, 8.88, 8.30, 9.45, 8.60, 9.30]
RESNET_COMPILED = [13.85, 13.20, 14.60, 13.50, 14.30, 9.53, 9.00, 10.10, 9.25, 9.90]


def _reps(ms: list[float]) -> dict:
    return {"ms": ms, "faults": []}


def test_two_clusters_on_both_sides_pair_by_when_they_ran():
    s = fb.speed(_bench(_reps(RESNET_EAGER), _reps(RESNET_COMPILED)))
    assert [round(m.speedup, 2) for m in s.modes] == [0.93, 0.97]  # fast/fast, slow/slow
    assert [m.verdict for m in s.modes] == [fb.SAME, fb.SAME] and s.verdict == fb.SAME
    assert fb.speedup_text(s) == f"0.93x or 0.97x ({text.NO_DIFFERENCE}; {text.TWO_CLUSTERS})"
    # The same values with the compiled clusters in other repetitions than the
    # eager ones: no phase to pair by, so the range of every pairing stays.
    shuffled = [RESNET_COMPILED[i] for i in (0, 1, 5, 6, 7, 2, 3, 4, 8, 9)]
    s = fb.speed(_bench(_reps(RESNET_EAGER), _reps(shuffled)))
    assert [round(m.speedup, 2) for m in s.modes] == [0.64, 1.41]
    assert s.verdict == fb.MIXED and fb.speedup_text(s) == f"0.64x or 1.41x ({text.TWO_CLUSTERS})"
