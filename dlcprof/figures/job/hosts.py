"""Each host's kernel-build workers against its cores: every process of a job
that compiles with Inductor runs its own pool of ``compile_threads`` build
workers, sized to the cores as if it were alone, so N ranks on one host start
N times that many at once (pytorch/pytorch#190941: "32 * 8 workers all
competing"). Read from each process's ProcessAttached (its cores: its CPU
affinity) and CompileThreadsRead (its workers, at its end)."""

from __future__ import annotations

from dlcprof import text
from dlcprof.data import data
from dlcprof.session import Run, Session

COMPILE_THREADS = "Inductor's compile_threads"


@data
class HostWorkers:
    host: str
    runs: list[Run]  # its processes that compiled
    workers: list[int] | None  # each process's pool; None: one is unknown (``why``)
    cores: int | None  # the most cores any of them may run on
    why: str = ""

    @property
    def total(self) -> int | None:
        return sum(self.workers) if self.workers is not None else None

    @property
    def oversubscribed(self) -> bool:
        total = self.total
        return total is not None and self.cores is not None and total > self.cores

    @property
    def threads(self) -> int:
        """compile_threads for each process so that their pools fit the cores."""
        return max(1, (self.cores or 1) // len(self.runs))


def host_workers(session: Session) -> list[HostWorkers]:
    """The hosts where more than one process of the program compiled (a
    recording from before dlcprof read cores and workers has none)."""
    hosts: dict[str, list[Run]] = {}
    for run in session.runs.values():
        if run.process is not None and run.compiles:
            hosts.setdefault(run.process.host, []).append(run)
    found = []
    for host, runs in sorted(hosts.items()):
        said = [r for r in runs if r.compile_threads or (r.process and r.process.cpu_count)]
        if len(runs) < 2 or not said:
            continue
        reads = [r.compile_threads for r in runs]
        cores = [r.process.cpu_count for r in runs if r.process and r.process.cpu_count]
        why = ""
        if any(e is None for e in reads):
            why = "a process ended before its compile workers were read (killed, or still running)"
        elif bad := next((e for e in reads if e is not None and e.threads is None), None):
            why = bad.why
        elif not cores:
            why = "the processes' cores were not recorded (a recording from an older dlcprof)"
        workers = None if why else [e.threads or 0 for e in reads if e is not None]
        found.append(HostWorkers(host, runs, workers, max(cores) if cores else None, why))
    return found


def workers_line(h: HostWorkers) -> str:
    """'host vm: 2 processes × 2 compile workers = 4 on 2 cores: they compete'."""
    head = f"host {h.host}: {len(h.runs)} processes × compile workers ({COMPILE_THREADS})"
    if h.workers is None or h.cores is None:
        return f"{head}: {text.na(h.why)}"
    each = f"{h.workers[0]}" if len(set(h.workers)) == 1 else "+".join(map(str, h.workers))
    line = f"host {h.host}: {len(h.runs)} processes × {each} compile workers ({COMPILE_THREADS})"
    line += f" = {h.total} on {text.plural(h.cores, 'core')}"
    if h.oversubscribed:
        return (
            line + ": more build workers than cores, each rank's kernel builds wait on the others'"
        )
    return line + ": they fit"


def worker_lines(session: Session) -> list[str]:
    return [workers_line(h) for h in host_workers(session)]
