"""The warm-start advice on cache_key.py's recorded runs
(tests/fixtures/torch_trace/cache_key): an attached program's cold run (both
graphs missed) with what a live run's probe records of its cache folder, and a
run whose setting differs from the job that filled the cache."""

from __future__ import annotations

import pytest
from helpers.torch_trace import trace_logs

from dlcprof import events as ev
from dlcprof import text
from dlcprof.cli import main
from dlcprof.figures.advice import trial as fat
from dlcprof.figures.advice.cache_rules import fill_setting
from dlcprof.figures.advice.rules import advise
from dlcprof.trace_import.job import import_trace


@pytest.fixture
def cold(tmp_path):
    session = import_trace([str(trace_logs("cache_key/base", tmp_path))], workers=1)
    (run,) = session.runs.values()
    return session, run


def items(session, run):
    return {i.rule: i for i in advise(session, run).items}


def test_a_new_folder_under_tmp_gets_both_remedies_with_the_misses_seconds(cold):
    session, run = cold
    run.process.cache_dir, run.process.cache_dir_state = "/tmp/torchinductor_ci", "missing"
    found = items(session, run)
    folder, mega = found["cache-folder"], found["mega-cache"]
    walls = sum(run.compiles[cid].wall_s for cid in ("0/0", "1/0"))
    backends = sum(
        run.compiles[cid].record.metrics["backend_compile_time_s"] for cid in ("0/0", "1/0")
    )
    for item in (folder, mega):
        assert item.predicted.before_s == pytest.approx(walls)
        assert item.predicted.saving_s == pytest.approx(backends)  # no hit: no load counted
        assert "the load not counted" in item.predicted.how
        assert 0 < item.predicted.saving_s < walls
        assert not item.options and item.try_why == fat.PROGRAM_TRY_WHY
    assert folder.evidence[0] == "Inductor's cache folder is torch's default /tmp/torchinductor_ci"
    assert mega.evidence[0].startswith("a new cache folder (cold)")
    assert "torch.compiler.load_cache_artifacts" in mega.snippet


def test_a_kept_filled_folder_gets_neither(cold):
    session, run = cold
    run.process.cache_dir, run.process.cache_dir_state = "/mnt/kept/cache", "filled"
    assert not {"cache-folder", "mega-cache"} & set(items(session, run))


def test_a_setting_that_differs_from_the_filling_job_is_advised_against_it(tmp_path):
    base, setting = (
        import_trace([str(trace_logs(f"cache_key/{n}", tmp_path / n))], workers=1)
        for n in ("base", "setting")
    )
    (base_run,) = base.runs.values()
    (run,) = setting.runs.values()
    item = fill_setting(run, base_run)
    assert item.evidence[0] == "Inductor setting `fallback_random` False → True"
    assert item.evidence[1].startswith("1 compile missed the caches (")
    # g missed; f hit in the same run: its backend seconds are what a hit's load took.
    g, f = (run.compiles[cid] for cid in ("1/0", "0/0"))
    backend = g.record.metrics["backend_compile_time_s"]
    load = f.record.metrics["backend_compile_time_s"]
    assert item.predicted.before_s == pytest.approx(g.wall_s)
    assert item.predicted.after_s == pytest.approx(g.wall_s - backend + load)
    assert "this run's hits' mean load" in item.predicted.how
    # The graph that changed is no setting to align.
    graph = import_trace([str(trace_logs("cache_key/graph", tmp_path / "g"))], workers=1)
    assert fill_setting(next(iter(graph.runs.values())), base_run) is None


def test_compare_of_two_imports_advises_the_filling_jobs_setting(tmp_path, capsys):
    reports = []
    for n in ("base", "setting"):
        logs = trace_logs(f"cache_key/{n}", tmp_path / n)
        assert main(["import", str(logs), "-o", str(tmp_path / f"{n}-report")]) == 0
        reports.append(str(tmp_path / f"{n}-report"))
    capsys.readouterr()
    assert main(["compare", *reports]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "advice: compile with the settings of the job that filled the cache" in out
    assert "Inductor setting `fallback_random` False → True" in out


def started(session):
    """The session as if dlcprof had started its command (so `try` can run it again)."""
    session.imported = None
    session.program = ev.ProgramStarted(argv=["python", "cache_key.py"], cwd="/", pid=1)
    return session


def test_a_started_programs_cache_items_can_be_tried(cold):
    session, run = cold
    run.process.cache_dir, run.process.cache_dir_state = "/tmp/torchinductor_ci", "missing"
    found = items(started(session), run)
    assert found["cache-folder"].options == {"cache": fat.KEPT_FOLDER}
    assert found["mega-cache"].options == {"cache": fat.MEGA_CACHE}


def test_a_cache_trial_measures_the_warm_start_against_the_cold_fill(cold, tmp_path):
    """The fill (both graphs missed) before, a start where f hit after: each
    side's compile seconds, its cache state, no 'not comparable'."""
    session, run = cold
    run.process.cache_dir, run.process.cache_dir_state = "/tmp/new", "missing"
    item = items(started(session), run)["mega-cache"]
    warm = import_trace([str(trace_logs("cache_key/setting", tmp_path / "w"))], workers=1)
    (warm_run,) = warm.runs.values()
    t = fat.tried(run, warm_run, item, (3.0, 2.0), cold=(session, run), warm=warm)
    assert (t.run_id, t.advised_run) == (warm_run.run_id, run.run_id)
    assert t.measured_before_s == pytest.approx(sum(c.wall_s for c in run.compiles.values()))
    assert t.measured_after_s == pytest.approx(sum(c.wall_s for c in warm_run.compiles.values()))
    assert (t.cache_before, t.cache_after) == ("miss", "partial")
    words = fat.tried_text(t)
    assert f"predicted {text.signed_pct(item.predicted.change)} compile" in words
    before, after = text.secs(t.measured_before_s), text.secs(t.measured_after_s)
    assert f"({before} → {after})" in words
    assert "; cache miss (fill) → a cache hit for some graphs" in words
    assert "not comparable" not in words
    assert "program wall -33% (3.00 s → 2.00 s)" in words
