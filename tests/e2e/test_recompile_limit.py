"""The recompile limit is loud (issue 29, item 10): the moment Dynamo gives a
function up, every live view says so at the function's file:line with the
limit, and what followed is counted: the calls that then ran eager.

tests/programs/recompile_limit.py compiles a step with dynamic=False and
recompile_limit 2, then calls it on 8 sizes: sizes 2 and 3 compile, the other
6 calls run eager.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from helpers.paths import PROGRAMS
from helpers.program import process_attached

from dlcprof import events as ev
from dlcprof.figures import live_log as ll
from dlcprof.figures import recompiles as fr
from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.trace_records.payloads import parse_limit_warning
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import guards as guards_probe
from dlcprof.worker.probes import trace as trace_probe

PROGRAM = PROGRAMS / "recompile_limit.py"
DEF_LINE = next(
    i for i, ln in enumerate(PROGRAM.read_text().splitlines(), 1) if ln.startswith("def scale")
)


def _step(x):
    return torch.cos(x) + 1


def test_the_live_line_names_the_users_line_and_the_limit():
    """A real compile hitting the limit in this process: torch's warning, read."""
    sink = ListEmitter()
    dispatcher = TraceDispatcher(sink, "r")
    uninstall = trace_probe.install(dispatcher, ProbeNotes(sink, "r"))
    assert uninstall is not None
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(recompile_limit=2):
            step = torch.compile(_step, backend="eager", dynamic=False)
            for n in range(2, 6):
                step(torch.ones(n))
    finally:
        uninstall()
        torch._dynamo.reset()
    (hit,) = [e for e in sink.events if isinstance(e, ev.RecompileLimitHit)]
    where = f"{__file__}:{_step.__code__.co_firstlineno}"
    assert (hit.function, hit.limit, hit.location) == ("_step", 2, where)
    words = "".join(w for w, _ in ll.event_line(hit))
    assert words.startswith(f"RECOMPILE LIMIT HIT {where} _step reached recompile_limit (2)")
    assert "now runs EAGER" in words and "size mismatch at index 0" in words
    assert "0/1:" not in fr.limit_line(hit)  # the guard, without torch's compile id


def _past_the_limit(calls: int, timed: bool = True) -> ev.EagerCallsCounted:
    """``_step`` compiled with recompile_limit 2 and called on ``calls`` sizes, its
    eager calls counted and timed as an attached program's are (attached/probe.py)."""
    sink = ListEmitter()
    notes = ProbeNotes(sink, "r")
    dispatcher = TraceDispatcher(sink, "r")
    eager = guards_probe.EagerCalls(notes, timed=timed)
    dispatcher.on_limit = lambda where: eager.start(dispatcher.counts, where)
    uninstall = trace_probe.install(dispatcher, notes)
    assert uninstall is not None
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(recompile_limit=2):
            step = torch.compile(_step, backend="eager", dynamic=False)
            for n in range(2, 2 + calls):
                step(torch.ones(n))
    finally:
        eager.stop()
        uninstall()
        torch._dynamo.reset()
    counted = eager.counted("r", dispatcher.snapshot())
    assert counted is not None
    return counted


def test_each_call_past_the_limit_is_timed_for_real():
    """Sizes 2, 3 compile; size 4 hits the limit (not timed: the hook comes after
    it); sizes 5..7 run eager and each is timed, to its return."""
    counted = _past_the_limit(6)
    assert counted.calls == 4 and counted.untimed is None
    assert len(counted.call_s) == 3 and all(0 < s < 1.0 for s in counted.call_s)
    assert sys.getprofile() is None  # the timer left no profiler behind
    words = fr.eager_each(counted.call_s, counted.untimed)
    assert words.startswith("each eager call: ") and "(median of 3 timed, " in words


def test_another_profiler_on_leaves_the_eager_calls_untimed_and_says_why():
    def theirs(frame, event, arg):
        return None

    sys.setprofile(theirs)
    try:
        counted = _past_the_limit(5)
    finally:
        sys.setprofile(None)
    assert counted.calls == 3 and counted.call_s == []
    assert "another profiler" in fr.eager_each(counted.call_s, counted.untimed)


def test_the_workers_sweep_keeps_its_own_timings_free_of_the_profile_hook():
    counted = _past_the_limit(5, timed=False)
    assert counted.calls == 3 and counted.call_s == []
    assert "the sweep times each size's calls" in (counted.untimed or "")


def test_the_warning_of_an_older_torch_reads_too():
    old = "torch._dynamo hit config.cache_size_limit (8)\n   function: 'fwd' (/m.py:3)"
    parsed = parse_limit_warning(old)
    assert parsed is not None and (parsed.function, parsed.limit, parsed.location) == (
        "fwd",
        8,
        "/m.py:3",
    )


@pytest.mark.slow
def test_an_attached_program_hears_the_limit_at_its_line_and_counts_the_eager_calls(tmp_path):
    out = tmp_path / "l.json"
    argv = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--no-hotspots"]
    p = subprocess.run(
        [*argv, "--", sys.executable, str(PROGRAM)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    where = f"{PROGRAM}:{DEF_LINE}"
    lines = p.stderr.splitlines()
    loud = next(i for i, ln in enumerate(lines) if "⚠ RECOMPILE LIMIT HIT" in ln)
    assert f"RECOMPILE LIMIT HIT {where} scale reached recompile_limit (2)" in lines[loud]
    # Said the moment it happens: before the failed compile torch records after it.
    assert loud < next(i for i, ln in enumerate(lines) if "recompile limit exceeded" in ln)
    run = json.loads(out.read_text())["runs"][0]
    hit = run["recompile_limit_hit"]
    assert (hit["location"], hit["limit"], hit["eager_calls"]) == (where, 2, 6)
    # The call that hit the limit ran before the timer was there: 5 of the 6 timed.
    assert hit["eager"].startswith("6 calls then ran eager; each eager call: ")
    assert "(median of 5 timed, " in hit["eager"]
    items = json.loads(out.read_text())["advice"]["items"]
    assert items[0]["rule"] == "recompile-limit" and items[0]["where"] == where


async def test_the_tui_alarm_names_the_line_the_limit_and_the_eager_calls():
    from textual.geometry import Region

    from dlcprof.session import Session
    from dlcprof.tui.app import DlcprofApp
    from dlcprof.tui.widgets.alarm import AlarmBanner

    s = Session()
    for e in (
        process_attached(7),
        ev.RecompileLimitHit(
            run_id="pid7",
            function="scale",
            limit=2,
            message="torch._dynamo hit config.recompile_limit (2)",
            location="/home/u/train.py:10",
        ),
        ev.EagerCallsCounted(run_id="pid7", calls=6, call_s=[0.004, 0.002, 0.003]),
        ev.RunFinished(run_id="pid7", status="ok", wall_s=1.0),
    ):
        s.apply(e)
    app = DlcprofApp(session=s, replay=True, deterministic=True, start_standby=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        banner = app.query_one(AlarmBanner)
        shown = banner.render_lines(Region(0, 0, banner.size.width, banner.size.height))
        said = " ".join(" ".join(strip.text for strip in shown).split())
    assert said.startswith(
        "⚠ RECOMPILE LIMIT HIT at /home/u/train.py:10: scale reached recompile_limit (2)"
    )
    assert (
        "6 calls then ran eager; each eager call: 3.00 ms (median of 3 timed, 2.00 ms–4.00 ms"
        in said
    )
