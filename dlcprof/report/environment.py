"""Where a session ran: from its events, else from the report it was loaded
from (``Session.provenance``), else this machine (the one probe of it)."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Any

from dlcprof import text
from dlcprof.figures import runs as fruns
from dlcprof.report.figure import Row, iso
from dlcprof.session import Session


@dataclass
class Environment:
    values: dict[str, Any]  # raw, null when not known: the JSON report's "environment"
    rows: list[Row]  # worded, for people


def environment(session: Session) -> Environment:
    """Where the session ran: from the events, else from the loaded report."""
    origin = (session.provenance or {}).get("environment") or {}
    w = session.worker
    run = session.latest_run
    s = run.settings if run else None
    bench_run = fruns.latest_benchmarked(session)
    values: dict[str, Any] = {
        "torch": (w.torch_version if w else None) or (s.torch_version if s else None),
        "python": w.python_version if w else None,
        "device": s.device if s else None,
        "device_name": (s.device_name if s else None) or (w.device_name if w else None),
        "cuda_available": w.cuda_available if w else None,
        "threads": s.threads if s else None,
        # Measured next to the benchmark: the load that could disturb it.
        "load_avg": list(bench_run.benchmark.load_avg) if bench_run else None,
        "cpu_count": w.cpu_count if w else None,
        "platform": origin.get("platform") or platform.platform(),
    }
    for k, v in values.items():
        if v is None and origin.get(k) is not None:
            values[k] = origin[k]
    la = values["load_avg"]
    recorded = iso(fruns.session_origin(session))
    rows = [
        Row("torch", text.value(values["torch"]), values["torch"] is None),
        Row("python", values["python"] or text.na("no WorkerReady event"), not values["python"]),
        Row("device", f"{text.value(values['device'])} · {text.value(values['device_name'])}"),
        Row("threads", text.value(values["threads"]), values["threads"] is None),
        Row("cpu count", text.value(values["cpu_count"]), values["cpu_count"] is None),
        Row(
            "load avg (1/5/15 min)",
            text.load_avg(la) if la else text.na("no benchmark ran"),
            not la,
        ),
        Row("platform", text.value(values["platform"])),
        Row("recorded", recorded or text.NA, recorded is None),
    ]
    return Environment(values, rows)
