"""What kind of program wrote a log, when it is not a ``torch.compile`` one:
``torch.export`` (an ``exported_program`` record), whose issues tlparse's
export mode (``tlparse -e``) lists by the same rules, or AOTInductor
(``inductor_aot_*`` code dumps), whose compiles torch logs without a compile
id (the dispatcher names them). Each is said in one line."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.trace_records.dispatcher import AOTI_PHASE
from dlcprof.trace_records.kernels import AOT_WRAPPER
from dlcprof.trace_records.log_file import Record

_SHOWN = 3  # export issues named before "and N more"
# The metadata keys that tell the kind of a log (``feed`` reads no other record).
_KINDS = frozenset(
    {
        "exported_program",
        "graph_dump",
        "guard_added",
        "propagate_real_tensors_provenance",
        "missing_fake_kernel",
        "mismatched_fake_kernel",
    }
)


@data
class LogKind:
    export: bool = False
    aot: int = 0  # AOTInductor compiles (one wrapper each)
    issues: list[str] = field(default_factory=list)  # "kind: expression (line N)"

    def feed(self, record: Record) -> None:
        md = record.metadata
        if _KINDS.isdisjoint(md):  # most records: said in C
            return
        if "exported_program" in md:
            self.export = True
        dump = md.get("graph_dump")
        if isinstance(dump, dict) and dump.get("name") == AOT_WRAPPER:
            self.aot += 1
        issue = _export_issue(md)
        if issue is not None:
            self.issues.append(f"{issue} (line {record.line})")

    def words(self, name: str) -> list[str]:
        out = []
        if self.export or self.issues:
            more = f"; and {len(self.issues) - _SHOWN} more" if len(self.issues) > _SHOWN else ""
            found = (
                f"{len(self.issues)} issue{'s' if len(self.issues) > 1 else ''} as tlparse -e "
                f"finds them: {'; '.join(self.issues[:_SHOWN])}{more}"
                if self.issues
                else "no issue as tlparse -e finds them"
            )
            out.append(
                f"{name} is a torch.export log: {found}; dlcprof reads no exported graph "
                "(its compiles and advice are of torch.compile only)"
            )
        if self.aot:
            shown = f"{ev.AOTI}0" + (f" to {ev.AOTI}{self.aot - 1}" if self.aot > 1 else "")
            out.append(
                f"{name} is an AOTInductor log: torch logs its compiles without a compile id, "
                f"shown as {shown}, each timed by its {AOTI_PHASE} span, its kernels read from "
                "AOTInductor's generated C++"
            )
        return out


def _export_issue(md: dict[str, Any]) -> str | None:
    """An export issue, as tlparse -e names it: a guard evaluated, a data-dependent
    expression specialized, an op's fake kernel missing or wrong."""
    guard = md.get("guard_added")
    if isinstance(guard, dict) and guard.get("prefix") == "eval":
        return f"Guard Evaluated: {guard.get('expr')}"
    prov = md.get("propagate_real_tensors_provenance")
    if isinstance(prov, dict):
        return f"Data Dependent Error: {prov.get('expr')} specialized to {prov.get('result')}"
    for key, kind in (
        ("missing_fake_kernel", "Missing Fake Kernel"),
        ("mismatched_fake_kernel", "Mismatched Fake Kernel"),
    ):
        kernel = md.get(key)
        if isinstance(kernel, dict):
            reason = f" ({kernel['reason']})" if kernel.get("reason") else ""
            return f"{kind}: torch.ops.{kernel.get('op')}{reason}"
    return None
