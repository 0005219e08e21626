"""JSON report: round trip through a saved folder, and every way a load fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import REPO
from helpers.report import (
    benchmark_session,
    full_session,
    graph_break_session,
    has_benchmark,
    has_graph_breaks,
    recorded_sessions,
    sweep_run,
    synthetic_session,
    with_monitors,
)

from dlcprof import events as ev
from dlcprof.report import load
from dlcprof.report.errors import ReportError
from dlcprof.report.folder import PROFILE_NAME, default_report_dir, save_session
from dlcprof.report.load import load_session
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import REPORT_SCHEMA, build_report
from dlcprof.session import Session


def _without_created(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "created"}


def _one_line(e: pytest.ExceptionInfo[ReportError]) -> str:
    msg = str(e.value)
    assert "\n" not in msg and msg.strip() == msg and msg
    return msg


# --- round trip ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [benchmark_session, graph_break_session, full_session, lambda: with_monitors(full_session())],
    ids=["benchmark", "graph_breaks", "all_fixtures", "with_monitors"],
)
def test_round_trip_through_folder(tmp_path: Path, make) -> None:
    session = make()
    before = _without_created(build_report(build_model(session)))
    folder = save_session(session, tmp_path / "rep")
    assert folder == tmp_path / "rep"
    for name in ("session.json", "report.html", "report.md", "trace.json"):
        assert (folder / name).stat().st_size > 0, name

    loaded = load_session(folder / "session.json")
    # Events identical, field for field.
    assert [ev.to_dict(e) for e in loaded.events] == [ev.to_dict(e) for e in session.events]
    # Same state: the report rebuilt from the replayed session matches the file...
    on_disk = json.loads((folder / "session.json").read_text())
    assert _without_created(build_report(build_model(loaded))) == _without_created(on_disk)
    # ...and the original session's report (the file adds only the files note).
    after = _without_created(build_report(build_model(loaded)))
    assert after.pop("extra")["files"]["profile"] is None
    before.pop("extra")
    assert after == before
    # The session object itself was not touched by saving.
    assert _without_created(build_report(build_model(session)))["runs"] == before["runs"]


def test_load_folder_and_bare_jsonl(tmp_path: Path) -> None:
    session = full_session()
    folder = save_session(session, tmp_path / "rep")
    assert len(load_session(folder).events) == len(session.events)
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(b"".join(ev.encode(e) for e in session.events))
    replayed = load_session(stream)
    assert [ev.to_dict(e) for e in replayed.events] == [ev.to_dict(e) for e in session.events]
    # A .json name holding an event stream is recognised too.
    renamed = tmp_path / "stream.json"
    renamed.write_bytes(stream.read_bytes())
    assert len(load_session(renamed).runs) == len(session.runs)


def test_report_fields(tmp_path: Path) -> None:
    report = build_report(build_model(full_session()), extra={"command": "dlcprof run x"})
    assert report["schema"] == REPORT_SCHEMA
    assert report["extra"]["command"] == "dlcprof run x"
    for key in (
        "torch",
        "python",
        "device",
        "device_name",
        "threads",
        "load_avg",
        "platform",
        "cpu_count",
    ):
        assert key in report["environment"]
    assert set(report["workload"]) == {"name", "target"}
    run = next(r for r in report["runs"] if r["benchmark"])
    for key in (
        "run_id",
        "status",
        "settings",
        "mode",
        "dynamic",
        "backend",
        "compiles",
        "benchmark",
        "shape_sweep",
        "recompile_limit_hit",
        "errors",
    ):
        assert key in run
    b = run["benchmark"]
    for key in (
        "eager_ms",
        "compiled_ms",
        "speedup",
        "verdict",
        "compile_s",
        "break_even_runs",
        "reps",
        "threads",
        "load_avg",
    ):
        assert key in b
    assert b["verdict"] in ("faster", "slower", "no measurable difference")
    for r in report["runs"]:
        assert {"samples", "metrics", "by_span", "monitors"} <= set(r["device"])
        assert {"samples", "rows"} <= set(r["hotspots"])
    c = run["compiles"][0]
    for key in (
        "compile_id",
        "wall_s",
        "phases",
        "kernels",
        "recompile_reason",
        "graph_breaks",
        "cache",
        "is_backward",
        "fail_type",
    ):
        assert key in c
    assert all({"name", "start_s", "duration_s", "depth"} <= set(p) for p in c["phases"])
    assert min(p["start_s"] for p in c["phases"]) >= 0  # relative to the run start
    assert any(p["depth"] > 0 for p in c["phases"])
    assert all(
        {"name", "kind", "graph", "fused_ops", "source", "source_lines"} <= set(k)
        for k in c["kernels"]
    )
    json.dumps(report)  # plain JSON all the way down


def test_break_even_null_unless_measurably_faster() -> None:
    report = build_report(build_model(full_session()))
    benches = [r["benchmark"] for r in report["runs"] if r["benchmark"]]
    by_verdict = {b["verdict"]: b for b in benches}
    # The recordings hold all three: faster, slower, and within the spread.
    assert set(by_verdict) == {"faster", "slower", "no measurable difference"}
    assert by_verdict["faster"]["break_even_runs"] > 1
    assert by_verdict["slower"]["break_even_runs"] is None
    # No measurable difference: no break-even, whichever side is a hair faster.
    assert by_verdict["no measurable difference"]["break_even_runs"] is None


def test_hotspots_and_device_per_run() -> None:
    session = with_monitors(full_session())
    report = build_report(build_model(session))
    latest = report["runs"][-1]
    assert latest["hotspots"]["samples"] == 412 and latest["hotspots"]["rows"]
    top = latest["hotspots"]["rows"][0]
    assert top["function"] == "_compile_file" and top["own"] == 160
    assert top["own_share"] == pytest.approx(160 / 412)
    assert report["hotspots"]["run_id"] == latest["run_id"]
    assert all(not r["hotspots"]["rows"] for r in report["runs"][:-1])
    # Samples fold per run; the session summary counts them all.
    per_run = sum(r["device"]["samples"] for r in report["runs"])
    assert report["device"]["samples"] == len(session.all_device_samples()) >= per_run > 0


def test_loaded_report_keeps_recording_platform(tmp_path: Path) -> None:
    folder = save_session(full_session(), tmp_path / "rep")
    data = json.loads((folder / "session.json").read_text())
    data["environment"]["platform"] = "Linux-recorded-elsewhere"
    (folder / "session.json").write_text(json.dumps(data))
    report = build_report(build_model(load_session(folder)))
    assert report["environment"]["platform"] == "Linux-recorded-elsewhere"


# --- failures -----------------------------------------------------------------------------


def test_a_save_builds_the_model_once(tmp_path: Path, monkeypatch) -> None:
    """session.json, report.html, report.md and trace.json place one model."""
    from dlcprof.report import model as rm

    session = with_monitors(full_session())
    builds: list[Session] = []
    runs: list[object] = []
    build, run_model = rm.build, rm.run_model

    def counted_build(s: Session) -> Any:
        builds.append(s)
        return build(s)

    def counted_run_model(*a: Any) -> Any:
        runs.append(a)
        return run_model(*a)

    monkeypatch.setattr(rm, "build", counted_build)
    monkeypatch.setattr(rm, "run_model", counted_run_model)
    save_session(session, tmp_path / "rep")
    assert builds == [session]
    assert len(runs) == len(session.runs)


def test_session_json_summary_reads_as_json_writes_it() -> None:
    """The summary, indented down to its flat objects (one a line), holds what
    json's own indenting writes: odd keys, tuples, values only str() can write."""
    from dlcprof.report.schema import dumps_report

    odd = Path("/x")
    summary = {
        "runs": [
            {
                "kernels": [{"name": "k", "why": {"t": "n/a"}, "ops": ("a", "b")}],
                "phases": [{"name": "dynamo"}, {"name": "inductor"}],
            }
        ],
        "by_int": {1: [{"a": 1}], None: {"b": [2]}, 2.5: "x"},
        "empty": {"list": [], "dict": {}, "nested": [[], [{}]]},
        "odd": [{"path": odd}, float("nan")],
        "events": [{"type": "RunStarted", "run_id": "r"}],
    }
    text = dumps_report(summary)
    want = json.loads(json.dumps(summary, indent=1, default=str))
    assert _nan_free(json.loads(text)) == _nan_free(want)
    lines = text.splitlines()
    assert '    {"name": "k", "why": {"t": "n/a"}, "ops": ["a", "b"]}' in lines
    assert lines[lines.index('   "phases": [') + 1 : lines.index('   "phases": [') + 3] == [
        '    {"name": "dynamo"},',
        '    {"name": "inductor"}',
    ]
    assert ' "events": [' in lines


def _nan_free(value: Any) -> Any:
    """NaN, which equals nothing, as a string: two decoded reports compare."""
    return json.loads(json.dumps(value).replace("NaN", '"NaN"'))


def test_loaded_report_carries_its_provenance(tmp_path: Path) -> None:
    """Where a loaded report was recorded is a field of its Session; a session
    recorded here has none."""
    session = benchmark_session()
    assert session.provenance is None
    folder = save_session(session, tmp_path / "rep", profile_path=None)
    loaded = load_session(folder)
    assert loaded.provenance is not None
    assert set(loaded.provenance) == {"environment", "created", "extra", "dlcprof_version"}
    assert loaded.provenance["environment"] == build_report(build_model(session))["environment"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ReportError) as e:
        load_session(tmp_path / "nope.json")
    assert "no such file" in _one_line(e)


def test_truncated_json_is_corrupted(tmp_path: Path) -> None:
    folder = save_session(full_session(), tmp_path / "rep")
    text = (folder / "session.json").read_text()
    bad = tmp_path / "cut.json"
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(ReportError) as e:
        load_session(bad)
    msg = _one_line(e)
    assert msg.startswith(f"{bad} is corrupted: ") and " at line " in msg


def test_truncated_jsonl_names_the_line(tmp_path: Path) -> None:
    lines = [ev.encode(e) for e in benchmark_session().events]
    bad = tmp_path / "cut.jsonl"
    bad.write_bytes(b"".join(lines[:5]) + lines[5][:20])
    with pytest.raises(ReportError) as e:
        load_session(bad)
    assert "is corrupted" in _one_line(e) and "at line 6" in str(e.value)


def test_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "bin.json"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ReportError) as e:
        load_session(bad)
    assert "is corrupted" in _one_line(e)


@pytest.mark.parametrize(
    "payload, expected",
    [
        ({"foo": 1}, "is not a dlcprof report (no 'schema' key)"),
        ([1, 2, 3], "is not a dlcprof report (JSON an array, not an object)"),
        ({"schema": "other.tool/3"}, "is not a dlcprof report (schema 'other.tool/3')"),
        ("hello", "is not a dlcprof report"),
    ],
)
def test_foreign_json(tmp_path: Path, payload, expected: str) -> None:
    p = tmp_path / "foreign.json"
    p.write_text(json.dumps(payload))
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert expected in _one_line(e)


def test_newer_schema(tmp_path: Path) -> None:
    p = tmp_path / "new.json"
    p.write_text(json.dumps({"schema": "dlcprof.report/3", "events": []}))
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert _one_line(e) == (
        f"{p} was written by a newer dlcprof (schema dlcprof.report/3); "
        "this one reads up to /2: upgrade dlcprof"
    )


def test_older_schema_goes_through_migration(tmp_path: Path, monkeypatch) -> None:
    session = benchmark_session()
    old = {"schema": "dlcprof.report/0", "stream": [ev.to_dict(e) for e in session.events]}
    p = tmp_path / "old.json"
    p.write_text(json.dumps(old))
    # Without a migration for /0 the reader says so, on one line.
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert "dlcprof.report/0" in _one_line(e) and "cannot read" in str(e.value)

    def v0_to_v1(report: dict) -> dict:
        report["events"] = report.pop("stream")
        return report

    monkeypatch.setitem(load.MIGRATIONS, 0, v0_to_v1)
    loaded = load_session(p)
    assert [ev.to_dict(x) for x in loaded.events] == old["stream"]


def test_report_without_events_list(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"schema": REPORT_SCHEMA, "events": {"a": 1}}))
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert "no 'events' list" in _one_line(e)


def test_bad_event_inside_report(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    good = ev.to_dict(ev.RunFinished("r1", "ok", 1.0))
    bad = {"type": "RunFinished", "run_id": "r1"}  # fields missing
    p.write_text(json.dumps({"schema": REPORT_SCHEMA, "events": [good, bad]}))
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert "is corrupted: event 2" in _one_line(e)


def test_unknown_event_types_are_skipped(tmp_path: Path) -> None:
    # A newer minor version may add event types within /1.
    p = tmp_path / "r.json"
    events = [ev.to_dict(e) for e in benchmark_session().events]
    events.insert(3, {"type": "SomethingNew", "t": 1.0, "x": 1})
    p.write_text(json.dumps({"schema": REPORT_SCHEMA, "events": events}))
    assert len(load_session(p).events) == len(events) - 1


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.json"
    p.write_text("")
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert "is empty" in _one_line(e)


def _hostile(tmp_path: Path, change) -> Path:
    """A real report with one thing changed by ``change(events)``."""
    events = [ev.to_dict(e) for e in with_monitors(full_session()).events]
    change(events)
    p = tmp_path / "hostile.json"
    p.write_text(json.dumps({"schema": REPORT_SCHEMA, "events": events}))
    return p


def _first(events: list[dict], kind: str) -> dict:
    return next(e for e in events if e["type"] == kind)


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda es: _first(es, "PhaseEnded").update(duration_s="abc"),
            "bad PhaseEnded event: duration_s is 'abc', not float",
        ),
        (
            lambda es: _first(es, "PhaseEnded").update(start_t=1e308),
            "bad PhaseEnded event: start_t is 1e+308, out of range",
        ),
        (
            lambda es: _first(es, "BenchmarkMeasured").update(eager_ms=float("nan")),
            "bad BenchmarkMeasured event: eager_ms is nan, out of range",
        ),
        (
            lambda es: _first(es, "RunStarted").update(threads=10**4000),
            "bad RunStarted event: threads is an int, out of range",
        ),
        (
            lambda es: _first(es, "RunStarted").update(shapes={"a": 1}),
            "bad RunStarted event: shapes is a dict, not list[int]",
        ),
        (
            lambda es: _first(es, "DeviceSampled").update(values=[1, 2]),
            "bad DeviceSampled event: values is a list",
        ),
        (
            lambda es: _first(es, "KernelGenerated").update(fused_ops=[None]),
            "bad KernelGenerated event: fused_ops is a list",
        ),
        (lambda es: _first(es, "RunFinished").pop("status"), "bad RunFinished event: no status"),
        # Well-typed values that make no sense: the figures fail, at load, not later.
        (
            lambda es: _first(es, "HotFramesSampled")["rows"].append({"own": "lots"}),
            "its events do not fit together",
        ),
    ],
    ids=[
        "wrong-type",
        "huge-timestamp",
        "nan",
        "huge-int",
        "dict-for-list",
        "list-for-dict",
        "null-in-list",
        "missing-field",
        "nonsense-rows",
    ],
)
def test_hostile_values_are_one_line(tmp_path: Path, change, expected: str) -> None:
    p = _hostile(tmp_path, change)
    with pytest.raises(ReportError) as e:
        load_session(p)
    msg = _one_line(e)
    assert msg.startswith(f"{p} is corrupted: ") and expected in msg


@pytest.mark.parametrize(
    "text",
    [
        '{"schema": "dlcprof.report/1", "events": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"schema": "dlcprof.report/1", "n": ' + "9" * 5000 + ', "events": []}',
        '{"schema": "dlcprof.report/1", "events": [{"type": "RunFinished", "run_id": "r", '
        '"status": "ok", "wall_s": Infinity}]}',
        "[" * 100_000,
    ],
    ids=["deep-nesting", "5000-digit-number", "infinity", "deep-jsonl-line"],
)
def test_hostile_json_is_one_line(tmp_path: Path, text: str) -> None:
    p = tmp_path / "hostile.json"
    p.write_text(text)
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert _one_line(e).startswith(f"{p} is ")


def test_nothing_in_a_report_is_executed(tmp_path: Path) -> None:
    """Template syntax and markup in a report are text, in every rendering."""
    from dlcprof.report.html import render_html
    from dlcprof.report.markdown import render_markdown

    evil = "{{ 7*7 }}{% raw %}<script>alert(1)</script>"

    def change(events: list[dict]) -> None:
        for e in events:
            if e["type"] in ("RunStarted", "WorkloadLoaded"):
                e["workload" if e["type"] == "RunStarted" else "name"] = evil
                e["target"] = evil if e["type"] == "RunStarted" else e.get("target")
            if e["type"] == "GraphBroken":
                e["reason"] = evil

    session = load_session(_hostile(tmp_path, change))
    html = render_html(build_model(session))
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "{{ 7*7 }}" in html and ">49<" not in html
    assert "{{ 7*7 }}" in render_markdown(build_model(session))


# --- saving -------------------------------------------------------------------------------


def test_save_never_overwrites(tmp_path: Path) -> None:
    s = benchmark_session()
    first = save_session(s, tmp_path / "rep")
    second = save_session(s, tmp_path / "rep")
    third = save_session(s, tmp_path / "rep")
    assert (first, second, third) == (tmp_path / "rep", tmp_path / "rep-2", tmp_path / "rep-3")
    assert all((p / "session.json").exists() for p in (first, second, third))


def test_save_uses_an_existing_empty_dir(tmp_path: Path) -> None:
    (tmp_path / "rep").mkdir()
    assert save_session(benchmark_session(), tmp_path / "rep") == tmp_path / "rep"


def test_save_next_to_a_file_of_that_name(tmp_path: Path) -> None:
    (tmp_path / "rep").write_text("not a folder")
    assert save_session(benchmark_session(), tmp_path / "rep") == tmp_path / "rep-2"


def test_save_copies_the_pyspy_profile(tmp_path: Path) -> None:
    prof = tmp_path / "profile.speedscope.json"
    prof.write_text('{"$schema": "https://www.speedscope.app/file-format-schema.json"}')
    events = benchmark_session().events
    events.append(ev.ProfileSaved(str(prof), "speedscope", 412))
    folder = save_session(Session.from_events(events), tmp_path / "rep")
    assert (folder / PROFILE_NAME).read_bytes() == prof.read_bytes()
    # An explicit path wins; a missing profile is noted, not fatal.
    folder2 = save_session(benchmark_session(), tmp_path / "rep", profile_path=str(prof))
    assert (folder2 / PROFILE_NAME).exists()
    gone = tmp_path / "gone.json"
    folder3 = save_session(benchmark_session(), tmp_path / "rep", profile_path=str(gone))
    assert not (folder3 / PROFILE_NAME).exists()
    note = json.loads((folder3 / "session.json").read_text())["extra"]["files"]["profile_note"]
    assert "not copied" in note


def test_failed_save_leaves_nothing_and_can_retry(tmp_path: Path, monkeypatch) -> None:
    session = benchmark_session()
    before = build_report(build_model(session))["events"]
    from dlcprof.report import atomic

    real_replace = atomic.os.replace
    calls = {"n": 0}

    def flaky_replace(src, dst):
        calls["n"] += 1
        if calls["n"] == 3:  # the third file fails
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", flaky_replace)
    with pytest.raises(ReportError) as e:
        save_session(session, tmp_path / "rep")
    assert "disk full" in _one_line(e)
    assert not (tmp_path / "rep").exists()  # the half-written folder is gone
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert save_session(session, tmp_path / "rep") == tmp_path / "rep"
    assert build_report(build_model(session))["events"] == before


def test_save_into_unwritable_place(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ReportError) as e:
        save_session(benchmark_session(), blocker / "sub" / "rep")
    assert "cannot create" in _one_line(e)


def test_default_report_dir() -> None:
    s = benchmark_session()
    d = default_report_dir(s)
    assert d.parent == Path("dlcprof-reports")
    name = s.latest_run.workload
    assert d.name.startswith(f"{name}-") and len(d.name) == len(name) + 16


# --- import rule --------------------------------------------------------------------------


def test_report_never_imports_torch_textual_rich_or_monitors() -> None:
    """Every module of dlcprof.report: the terminal's tables (Rich) are dlcprof.tables'."""
    code = (
        "import sys, importlib, pkgutil, dlcprof.report\n"
        "for m in pkgutil.iter_modules(dlcprof.report.__path__):\n"
        "    importlib.import_module('dlcprof.report.' + m.name)\n"
        "import dlcprof.figures.compare\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'textual', 'rich'))\n"
        "assert not bad, bad\n"
        # Reports read what the monitors recorded from the session, never the monitors.
        "assert 'dlcprof.monitors' not in sys.modules, 'dlcprof.monitors imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --- the test sessions themselves -------------------------------------------------


def test_synthetic_stream_folds() -> None:
    s = synthetic_session()
    assert len(s.runs) == 4
    assert all(r.status == "ok" for r in s.runs.values())
    static = sweep_run(s, "false")
    assert static is not None and len(static.recompiles) == 4
    assert all(rc.cost_s for rc in static.recompiles)
    assert has_benchmark(s) and has_graph_breaks(s)


def test_fixtures_decode() -> None:
    for name, session in recorded_sessions().items():
        assert session().runs, f"{name} has no run"
