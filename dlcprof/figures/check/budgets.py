"""Budgets, and one run judged against them: each budget exceeded makes a
violation of every finding it counted (the user fixes them one by one), the
compile time one violation of its own."""

from __future__ import annotations

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import cache_misses as fcm
from dlcprof.figures.check import places
from dlcprof.figures.check.findings import CompileTime, Finding, compile_time, findings_of
from dlcprof.session import Run

# Two runs of one command differ in compile time by up to this share (and
# baseline.FLOOR_S) with nothing changed: measured, benchmarks/RESULTS.md section 15.
COMPILE_TOLERANCE = 0.25


@data(frozen=True)
class Budgets:
    """None: not budgeted. ``tolerance``: how far a compile time may exceed its
    baseline's before it counts as regressed (a share of the baseline's)."""

    graph_breaks: int | None = None
    recompiles: int | None = None
    compiles: int | None = None
    cache_misses: int | None = None
    compile_s: float | None = None
    tolerance: float = COMPILE_TOLERANCE
    # Graph-break ids accepted whatever their number ("GB0124"): not counted.
    allowed_breaks: tuple[str, ...] = ()

    def checks(self) -> list[str]:
        """The budgets set, in order."""
        return [c for c in (*COUNTED, "compile_s") if getattr(self, c) is not None]


COUNTED = ("graph_breaks", "recompiles", "compiles", "cache_misses")
# Each check: its title, as the output and the JUnit test cases name it.
TITLES = {
    "graph_breaks": "graph breaks",
    "recompiles": "recompiles",
    "compiles": "compiles",
    "cache_misses": "cache misses",
    "compile_s": "compile time",
    "new_graph_breaks": "graph breaks new since the baseline",
    "new_recompiles": "recompiles new since the baseline",
    "new_frames": "frames newly compiled since the baseline",
    "compile_regression": "compile time against the baseline",
    "unseen": "no compile seen",
}


@data(frozen=True)
class Violation:
    check: str  # a key of TITLES
    where: str  # "file:line" in the user's code; "" when none is known
    message: str  # one line: Dynamo's reason or guard and torch's hint, or the figure
    run: str  # the run it belongs to (a process, a rank, a test); "" when alone
    compile_id: str = ""

    @property
    def what(self) -> str:
        """The message, naming its run: "graph break: ... [rank 1]"."""
        return self.message + run_tag(self.run)

    def line(self) -> str:
        """ "train.py:23: graph break: Data-dependent branching (hint: ...) [rank 1]"."""
        head = f"{self.where}: " if self.where else ""
        return head + self.what


def run_tag(run: str) -> str:
    """ " [rank 1]": the run a line belongs to; "" when it is alone."""
    return f" [{run}]" if run else ""


@data(frozen=True)
class Count:
    """One budgeted figure of one run: what it came to, and its budget."""

    check: str
    value: float
    budget: float
    allowed: int = 0  # findings of an allowed kind, not in value

    @property
    def over(self) -> bool:
        return self.value > self.budget

    def words(self, time: CompileTime | None = None) -> str:
        sign = ">" if self.over else "≤"
        if self.check == "compile_s" and time is not None:
            return f"{TITLES[self.check]} {time.words()} {sign} {text.secs(self.budget)}"
        allowed = f" ({self.allowed} of an allowed kind not counted)" if self.allowed else ""
        return f"{TITLES[self.check]} {int(self.value)} {sign} {int(self.budget)}{allowed}"


def placed(
    check: str, found: list[Finding], run: Run, label: str, before: str, after: str
) -> list[Violation]:
    """A violation of ``check`` per finding at the user's line, and one for
    those only inside libraries; each message ``before`` + the finding + ``after``."""
    theirs = [f for f in found if not places.users(f)]
    out = [
        Violation(check, f.where, f"{before}{f.words()}{after}", label, f.compile_id)
        for f in found
        if places.users(f)
    ]
    if theirs:
        at, words = places.inside_libraries(theirs, run)
        out.append(Violation(check, at, f"{before}{words}{after}", label))
    return out


def judge(
    run: Run, budgets: Budgets, label: str, base: Run | None = None
) -> tuple[list[Count], list[Violation]]:
    """Each budget's count for ``run``, and the violations of those exceeded
    (a cache miss explained against ``base``, its baseline run, where given)."""
    found = findings_of(run, base)
    counts, violations = [], []
    for check in COUNTED:
        budget = getattr(budgets, check)
        if budget is None:
            continue
        counted = [f for f in found[check] if not (f.gb_id and f.gb_id in budgets.allowed_breaks)]
        count = Count(check, len(counted), budget, len(found[check]) - len(counted))
        counts.append(count)
        if count.over:
            violations += placed(check, counted, run, label, "", f" ({count.words()})")
    unseen = fcm.unseen(run) if budgets.cache_misses is not None else None
    if unseen is not None:  # what dlcprof did not see it never calls fine
        violations.append(
            Violation("cache_misses", "", f"{TITLES['cache_misses']} {unseen}", label)
        )
    if budgets.compile_s is not None:
        time = compile_time(run)
        count = Count("compile_s", time.seconds, budgets.compile_s)
        counts.append(count)
        if count.over:
            violations.append(Violation("compile_s", "", count.words(time), label))
    return counts, violations
