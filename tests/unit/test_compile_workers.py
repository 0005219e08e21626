"""Each host's kernel-build workers against its cores, and compile_threads
advised from them (issue 29 item 11(b)): every rank runs Inductor's own pool
of compile_threads workers, sized as if it were alone on the host.

Real data: tests/fixtures/programs/ddp_odd_batch.jsonl, a 2-rank gloo job on
one host, recorded before dlcprof read cores and workers; each case adds what
a process now says (its affinity's cores on ProcessAttached, its
compile_threads at its end). The real 2-rank job: tests/e2e/test_torchrun.py."""

from __future__ import annotations

import dataclasses
import sys
from types import SimpleNamespace

from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof.figures.advice.rules import advise
from dlcprof.figures.job import hosts as fhosts
from dlcprof.figures.job import ranks as fr
from dlcprof.session import Session
from dlcprof.worker.probes import compile_workers

FIXTURE = "programs/ddp_odd_batch"


def _job(cores: int | None, threads: list[int | None], why: str = "") -> Session:
    events = []
    for e in load_fixture(FIXTURE):
        if isinstance(e, ev.ProcessAttached):
            e = dataclasses.replace(e, cpu_count=cores)
        events.append(e)
    runs = [e.run_id for e in events if isinstance(e, ev.ProcessAttached)]
    events += [
        ev.CompileThreadsRead(run_id=r, threads=n, why=why)
        for r, n in zip(runs, threads, strict=False)
    ]
    return Session.from_events(events)


def _rules(s: Session) -> list[list[str]]:
    return [[i.rule for i in advise(s, r).items] for r in s.runs.values() if r.process]


def test_more_workers_than_cores_is_said_per_host_and_advised():
    s = _job(8, [8, 8])
    (h,) = fhosts.host_workers(s)
    assert (h.host, len(h.runs), h.total, h.cores, h.oversubscribed) == ("vm", 2, 16, 8, True)
    line = fhosts.workers_line(h)
    assert line.startswith("host vm: 2 processes × 8 compile workers (Inductor's compile_threads)")
    assert "= 16 on 8 cores: more build workers than cores" in line
    assert line in fr.notes(s, fr.rank_rows(s, []))
    for rules in _rules(s):
        assert "compile-workers" in rules
    run = next(r for r in s.runs.values() if r.process)
    (item,) = [i for i in advise(s, run).items if i.rule == "compile-workers"]
    assert "TORCHINDUCTOR_COMPILE_THREADS=4" in item.change and "2 processes × 4 = 8" in item.change
    assert item.snippet.startswith("torch._inductor.config.compile_threads = 4")


def test_workers_that_fit_the_cores_are_said_and_not_advised():
    s = _job(8, [4, 4])
    (h,) = fhosts.host_workers(s)
    assert fhosts.workers_line(h).endswith("= 8 on 8 cores: they fit")
    assert all("compile-workers" not in rules for rules in _rules(s))


def test_what_cannot_be_read_reads_na_with_why():
    unread = fhosts.workers_line(fhosts.host_workers(_job(8, [8]))[0])
    assert "n/a (a process ended before its compile workers were read" in unread
    old = fhosts.workers_line(fhosts.host_workers(_job(None, [8, 8]))[0])
    assert "n/a (the processes' cores were not recorded" in old
    renamed = _job(8, [8, None], why="torch._inductor.config.compile_threads: AttributeError")
    assert "n/a (torch._inductor.config.compile_threads: AttributeError)" in fhosts.workers_line(
        fhosts.host_workers(renamed)[0]
    )
    assert all("compile-workers" not in rules for rules in _rules(renamed))


def test_the_adapter_reads_the_loaded_config_and_never_imports_it(monkeypatch):
    """(The real read: the torchrun job in tests/e2e/test_torchrun.py.)"""
    monkeypatch.setitem(sys.modules, "torch._inductor.config", SimpleNamespace(compile_threads=3))
    assert compile_workers.read("r").threads == 3
    monkeypatch.setitem(sys.modules, "torch._inductor.config", SimpleNamespace())
    assert "compile_threads: AttributeError" in compile_workers.read("r").why
    monkeypatch.delitem(sys.modules, "torch._inductor.config")
    gone = compile_workers.read("r")
    assert gone.threads == 0 and gone.why == compile_workers.NEVER_LOADED
    assert "torch._inductor.config" not in sys.modules
