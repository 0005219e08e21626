"""Where a session ran: from its events, else from the report it was loaded
from (``Session.provenance``), else this machine (the one probe of it)."""

from __future__ import annotations

import platform
from typing import Any

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import runs as fruns
from dlcprof.report.figure import Row, iso
from dlcprof.session import Session


@data
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
    # An attached program's process says who it is (ProcessAttached); it has no
    # worker and no resolved settings: the program picks its own device and threads.
    proc = run.process if run else None
    attached = proc is not None and w is None and s is None
    imported = run is not None and fruns.is_imported(run)
    values: dict[str, Any] = {
        "torch": (w.torch_version if w else None)
        or (s.torch_version if s else None)
        or (proc.torch_version if proc else None)
        or None,
        "python": (w.python_version if w else None) or (proc.python_version if proc else None),
        "device": s.device if s else None,
        "device_name": (s.device_name if s else None) or (w.device_name if w else None),
        "cuda_available": w.cuda_available if w else None,
        "threads": s.threads if s else None,
        # Measured next to the benchmark: the load that could disturb it.
        "load_avg": list(bench_run.benchmark.load_avg)
        if bench_run and bench_run.benchmark
        else None,
        "cpu_count": (w.cpu_count if w else None) or (proc.cpu_count if proc else None),
        # An import's logs do not say where they ran; this machine is not it.
        "platform": origin.get("platform") or (None if imported else platform.platform()),
    }
    for k, v in values.items():
        if v is None and origin.get(k) is not None:
            values[k] = origin[k]
    la = values["load_avg"]
    recorded = iso(fruns.session_date(session))
    unset = text.na("an attached program sets its own") if attached else text.NA
    unset_n = text.na("the process did not report it") if attached else text.NA
    if imported:
        unset = unset_n = text.na(fruns.NOT_IN_LOG)
    device = (
        f"{text.value(values['device'])} · {text.value(values['device_name'])}"
        if values["device"] or values["device_name"] or not attached
        else unset
        if imported
        else text.na("an attached program picks its tensors' device")
    )
    # An imported log names its torch in a torch_version record, if it has one.
    no_torch = text.na("its log has no torch_version record") if imported else text.NA
    rows = [
        Row("torch", values["torch"] or no_torch, values["torch"] is None),
        Row(
            "python",
            values["python"] or (unset if imported else text.na("the worker did not say")),
            not values["python"],
        ),
        Row("device", device, attached and not values["device"]),
        Row(
            "threads",
            text.value(values["threads"]) if values["threads"] else unset,
            not values["threads"],
        ),
        Row(
            "cpu count",
            text.value(values["cpu_count"]) if values["cpu_count"] else unset_n,
            not values["cpu_count"],
        ),
        Row(
            "load avg (1/5/15 min)",
            text.load_avg(la) if la else unset if imported else text.na("no benchmark ran"),
            not la,
        ),
        Row(
            "platform",
            text.value(values["platform"]) if values["platform"] else unset,
            not values["platform"],
        ),
        Row(
            "recorded",
            recorded or (text.na("no record in the logs holds a date") if imported else text.NA),
            recorded is None,
        ),
    ]
    if imported and proc is not None:
        # A log does not name its host or command: its folder and its file.
        rows += [Row("logs' folder", proc.host), Row("log", " ".join(proc.argv))]
    elif attached and proc is not None:
        prog = session.program
        command = text.command_words(prog.argv, prog.cwd) if prog else " ".join(proc.argv)
        rows += [Row("host", proc.host), Row("command", command)]
    return Environment(values, rows)
