"""dlcprof's pytest plugin (entry point ``pytest11``): compile budgets per test.

- ``@pytest.mark.compile_budget(graph_breaks=, recompiles=, compiles=,
  cache_misses=, compile_s=, allow=(), reset=True)``: the test fails when its own
  compiles exceed the budget, the graph breaks of the ids in ``allow`` ("GB0124")
  not counted; Dynamo's caches are reset before it (``reset=False`` keeps them);
- the fixture ``compile_watch``: the test's compiles, graph breaks and
  recompiles so far (``figures/check/findings.py: Finding``);
- ``--dlcprof-report DIR``: every test a run of one session, saved there;
  ``--dlcprof-baseline SESSION``: each test judged against its run there.

Inert unless a test uses it: importing this module imports neither torch nor
Textual; the host (``host.py``, the shared probe set in this process) is
built at the first test that needs it. The judging is ``figures/check/``'s,
as ``dlcprof check`` judges a program."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Loaded into every pytest run where dlcprof is installed: what a test that
# uses the plugin needs is imported when one does.
if TYPE_CHECKING:
    from dlcprof.figures.check.findings import Finding
    from dlcprof.figures.check.verdict import Said
    from dlcprof.session import Session
    from dlcprof.worker.pytest_plugin.host import Host

MARKER = "compile_budget"
BUDGETS = ("graph_breaks", "recompiles", "compiles", "cache_misses", "compile_s")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dlcprof", "dlcprof: compile budgets")
    group.addoption(
        "--dlcprof-report",
        type=Path,
        default=None,
        metavar="DIR",
        help="save one dlcprof session, a run per test, to this report folder",
    )
    group.addoption(
        "--dlcprof-baseline",
        type=Path,
        default=None,
        metavar="SESSION",
        help="judge each test against its run in this saved dlcprof session",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(graph_breaks=None, recompiles=None, compiles=None, cache_misses=None, "
        "compile_s=None, allow=(), reset=True): fail the test when its own compiles exceed "
        "these (dlcprof), the graph breaks of the ids in allow not counted; "
        "Dynamo's caches are reset before it unless reset=False",
    )
    config.pluginmanager.register(Watcher(config), "dlcprof-watcher")


class Watcher:
    """Which tests are watched, their runs, and the verdict on each."""

    def __init__(self, config: pytest.Config) -> None:
        self.report: Path | None = config.getoption("dlcprof_report")
        baseline: Path | None = config.getoption("dlcprof_baseline")
        self.baseline: Session | None = _load(baseline) if baseline is not None else None
        self._host: Host | None = None
        self.t0 = time.time()
        self.failed: set[str] = set()  # the watched tests whose report failed

    def host(self) -> Host:
        if self._host is None:
            from dlcprof.session import Session
            from dlcprof.worker.pytest_plugin.host import Host

            self._host = Host(Session())
            self._host.program(started=True)
        return self._host

    def watched(self, item: pytest.Item) -> bool:
        return (
            item.get_closest_marker(MARKER) is not None
            or "compile_watch" in getattr(item, "fixturenames", ())
            or self.report is not None
            or self.baseline is not None
        )

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        if self.watched(item):
            marker = item.get_closest_marker(MARKER)
            asked = marker is not None or "compile_watch" in getattr(item, "fixturenames", ())
            reset = marker.kwargs.get("reset", True) if marker is not None else asked
            self.host().start(item.nodeid, reset=bool(reset))
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        marker = item.get_closest_marker(MARKER)
        judged = self._host is not None and (marker is not None or self.baseline is not None)
        try:
            result = yield
        except BaseException:
            # The test's own failure first (a compile that raised under
            # fullgraph=True): the verdict beside it, in a section of its own.
            failure = self.judge(item.nodeid, marker) if judged else ""
            if failure:
                item.add_report_section("call", "dlcprof", failure)
            raise
        if judged:
            failure = self.judge(item.nodeid, marker)
            if failure:
                pytest.fail(failure, pytrace=False)
        return result

    def judge(self, run_id: str, marker: pytest.Mark | None) -> str:
        """The failure text of test ``run_id``, "" when it is within its budget."""
        from dlcprof.figures.check import verdict as fv
        from dlcprof.figures.check.budgets import Budgets

        assert self._host is not None
        self._host.flush()
        budgets = Budgets(**_budgets(marker)) if marker is not None else Budgets()
        session = self._host.session
        run = session.runs.get(run_id)
        if run is None:
            return ""
        v = fv.judge_session(session, budgets, self.baseline, runs=[run])
        return "" if v.passed else failure_text(fv.said(v, "dlcprof compile budget", "test"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: Any
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if self._host is not None and item.nodeid in self._host.session.runs and report.failed:
            self.failed.add(item.nodeid)
        return report

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        run = self._host.session.runs.get(nodeid) if self._host is not None else None
        if self._host is not None and run is not None and run.live:
            self._host.finish(nodeid, "error" if nodeid in self.failed else "ok")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.report is None:
            return
        from dlcprof.report.errors import ReportError
        from dlcprof.report.folder import save_session

        worker = getattr(session.config, "workerinput", None)
        if worker is None and session.config.pluginmanager.hasplugin("dsession"):
            return  # pytest-xdist's controller runs no test: each worker saves its own
        host = self.host()  # a session with no test still says how pytest ran
        host.program(started=False, status=int(exitstatus), wall_s=time.time() - self.t0)
        # Each pytest-xdist worker its own session, beside the others.
        target = (
            self.report.with_name(f"{self.report.name}-{worker['workerid']}")
            if worker
            else self.report
        )
        try:
            folder = save_session(host.session, target)
            said = f"dlcprof: {len(host.session.runs)} tests saved to {folder}"
        except ReportError as e:
            said = f"dlcprof: --dlcprof-report: {e}"
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(said)


def failure_text(said: Said) -> str:
    """A test's failure: the verdict's lines in its one order, the summary at the head."""
    rest = [*(v.line() for v in said.violations), *said.runs, f"({said.measure})"]
    return "\n".join([said.summary, *(f"  {line}" for line in rest)])


def _budgets(marker: pytest.Mark) -> dict[str, Any]:
    from dlcprof.trace_records.gb_catalogue import is_id

    unknown = set(marker.kwargs) - {*BUDGETS, "reset", "allow"}
    if marker.args or unknown:
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER} takes keywords only, of {', '.join(BUDGETS)}, allow, reset "
            f"(got {', '.join(map(repr, marker.args)) or ', '.join(sorted(unknown))})"
        )
    allow = marker.kwargs.get("allow", ())
    allow = (allow,) if isinstance(allow, str) else tuple(allow)
    bad = [a for a in allow if not (isinstance(a, str) and is_id(a))]
    if bad:
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER}(allow=...): {bad[0]!r} is not a graph-break id, e.g. GB0124"
        )
    budgets = {k: marker.kwargs[k] for k in BUDGETS if k in marker.kwargs}
    return budgets | ({"allowed_breaks": allow} if allow else {})


def _load(path: Path) -> Session:
    from dlcprof.report.errors import ReportError
    from dlcprof.report.load import load_session

    try:
        return load_session(path)
    except ReportError as e:
        raise pytest.UsageError(f"--dlcprof-baseline: {e}") from None


class CompileWatch:
    """The test's compiles, graph breaks and recompiles so far, each a
    ``Finding`` (``where``: the user's file:line, ``reason``, ``compile_id``)."""

    def __init__(self, watcher: Watcher, run_id: str) -> None:
        self._watcher, self._run_id = watcher, run_id

    def _found(self, kind: str) -> list[Finding]:
        from dlcprof.figures.check.findings import findings_of

        host = self._watcher.host()
        host.flush()
        run = host.session.runs.get(self._run_id)
        return findings_of(run)[kind] if run is not None else []

    @property
    def compiles(self) -> list[Finding]:
        return self._found("compiles")

    @property
    def graph_breaks(self) -> list[Finding]:
        return self._found("graph_breaks")

    @property
    def recompiles(self) -> list[Finding]:
        return self._found("recompiles")


@pytest.fixture
def compile_watch(request: pytest.FixtureRequest) -> CompileWatch:
    """What the test compiled so far (dlcprof): ``.compiles``, ``.graph_breaks``,
    ``.recompiles``, each a list of findings with ``where``, ``reason``, ``compile_id``."""
    watcher = request.config.pluginmanager.get_plugin("dlcprof-watcher")
    assert watcher is not None  # registered at pytest_configure
    return CompileWatch(watcher, request.node.nodeid)
