"""Torch's structured-trace payloads, read: pure functions of a record's
metadata and payload string, tested on payloads recorded from real runs."""

from __future__ import annotations

import ast
import functools
import itertools
import json
import linecache
import os
import re
import sysconfig
from collections.abc import Callable
from dataclasses import field
from json.scanner import make_scanner
from types import FrameType
from typing import Any, cast

from dlcprof import own_code
from dlcprof.data import data
from dlcprof.text import in_torch
from dlcprof.trace_records import gb_catalogue
from dlcprof.trace_records.torch_dir import TORCH_DIR

# compilation_metrics fields kept in CompileFinished.metrics (as torch names them).
METRIC_FIELDS = (
    "co_name",
    "co_filename",
    "co_firstlineno",
    "frame_key",
    "is_forward",
    "start_time_us",
    "end_time_us",
    "duration_us",
    "entire_frame_compile_time_s",
    "backend_compile_time_s",
    "inductor_compile_time_s",
    "code_gen_time_s",
    "triton_compile_time_us",
    "compile_time_autotune_time_us",
    "dynamo_cumulative_compile_time_us",
    "aot_autograd_cumulative_compile_time_us",
    "inductor_cumulative_compile_time_us",
    "inductor_code_gen_cumulative_compile_time_us",
    "backward_cumulative_compile_time_us",
    "pre_grad_pass_time_us",
    "joint_graph_pass_time_us",
    "post_grad_pass_time_us",
    "gc_time_us",
    "guard_latency_us",
    "structured_logging_overhead_s",
    "dynamo_time_before_restart_s",
    "restart_reasons",
    "runtime_cudagraphify_time_us",
    "runtime_triton_autotune_time_us",
    "guard_count",
    "shape_env_guard_count",
    "graph_op_count",
    "graph_node_count",
    "graph_input_count",
    "ir_count",
    "num_graph_breaks",
    "cache_size",
    "accumulated_cache_size",
    "recompile_reason",
    "fail_type",
    "fail_reason",
    "fail_user_frame_filename",
    "fail_user_frame_lineno",
    "cudagraph_skip_reason",
    "inductor_fx_local_cache_hit_count",
    "inductor_fx_local_cache_miss_count",
    "inductor_fx_remote_cache_hit_count",
    "inductor_fx_remote_cache_miss_count",
    "aotautograd_local_cache_hit_count",
    "aotautograd_local_cache_miss_count",
    "aotautograd_remote_cache_hit_count",
    "aotautograd_remote_cache_miss_count",
    "remote_cache_time_saved_s",
    "triton_kernel_compile_times_us",
    "non_compliant_ops",
    "compliant_custom_ops",
    "has_guarded_code",
)

# How torch's messages name the recompile limit (older torch: the cache size limit).
_LIMIT_TEXT = ("recompile limit", "recompile_limit", "cache_size_limit", "cache size limit")


def record_name(metadata: dict[str, Any]) -> str:
    """The event name: the first key, or the artifact's name."""
    if not metadata:
        return ""
    key = next(iter(metadata))
    if key == "artifact":
        art = metadata.get("artifact")
        if isinstance(art, dict) and art.get("name"):
            return str(art["name"])
    return key


def compile_id_of(metadata: dict[str, Any]) -> str | None:
    """The compile id "frame/compile" from record metadata (the attempt is not part of it)."""
    frame, comp = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None or comp is None:
        return None
    return f"{frame}/{comp}"


@data
class GraphBreakInfo:
    reason: str
    location: str  # the innermost frame in the user's own code
    hints: list[str] = field(default_factory=list)
    detail: str = ""  # where Dynamo broke, when that is elsewhere (inside torch)
    gb_id: str = ""  # torch's id of the break type ("GB0124"), "" when torch names none
    link: str = ""  # its page on torch's graph-break site
    context: str = ""  # Dynamo's debug context: the call that broke ("builtin print [...]")


HOP_LINE = "Higher Order Operator:"
_GB_AT_RE = re.compile(r"Graph break in user code at (.+):(\d+)\s*$", re.M)
_GB_CONTEXT_RE = re.compile(r"Developer debug context: (.*)")
_DELAYED_RE = re.compile(r"Explanation:[^\n]*?Reason: ([^\n]+)")
_GB_FILE_RE = re.compile(r'File "([^"]+)", line (\d+)')


def _library_dirs() -> tuple[str, ...]:
    # "scripts": the console scripts packages install (`litgpt`, `accelerate`):
    # a stub that calls into its package, no line the user wrote.
    paths = sysconfig.get_paths()
    keys = ("stdlib", "platstdlib", "purelib", "platlib", "scripts")
    dirs = {os.path.realpath(paths[k]) for k in keys}
    return tuple(d + os.sep for d in dirs)


_LIBRARY_DIRS = _library_dirs()
_LIBRARY_RE = re.compile(r"[/\\](?:site|dist)-packages[/\\]")


@functools.lru_cache(maxsize=4096)  # a log names the same few files in frame after frame
def frame_owner(path: str) -> str:
    """Whose code a traceback frame is in: "harness" (dlcprof's worker, the
    interpreter), "torch", "library" (the standard library, installed
    packages, the bundled workloads) or "user"."""
    if path.startswith("<") or own_code.module(path) is not None:
        return "harness"
    real = os.path.realpath(path)
    if (TORCH_DIR is not None and real.startswith(TORCH_DIR)) or in_torch(real):
        return "torch"
    return "library" if real.startswith(_LIBRARY_DIRS) or _LIBRARY_RE.search(real) else "user"


def call_site(frame: FrameType | None, with_call: bool = False) -> tuple[str, str, str]:
    """(the program's file:line, the library's file:line, the program's call)
    of the call that reached ``frame``'s compile, walking out past dlcprof and
    the logging inside torch, then past torch: the first frame left called the
    compiled code; when it is a library's, the program's innermost frame further
    out is the call the user can change. The call (``with_call``; "" through a
    library) is its source, as ``call_source`` reads it."""
    while frame is not None and frame_owner(frame.f_code.co_filename) != "torch":
        frame = frame.f_back
    through = ""
    while frame is not None:
        code = frame.f_code
        owner = frame_owner(code.co_filename)
        where = f"{code.co_filename}:{frame.f_lineno}"
        if owner == "user":
            return where, through, call_source(frame) if with_call and not through else ""
        if owner == "library" and not through:
            through = where
        frame = frame.f_back
    return "", through, ""


def call_source(frame: FrameType) -> str:
    """The source of the call ``frame`` is making (``model(batch["x"])`` of
    ``loss = f(model(batch["x"]))``): its current instruction's span, which
    Python 3.11 and later keep; "" where the span or the file is not there, or
    the span is no call."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None or frame.f_lasti < 0:  # Python 3.10; a frame not started
        return ""
    span = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
    if span is None or None in span:
        return ""
    first, last, start, end = span
    path = frame.f_code.co_filename
    # Columns count UTF-8 bytes.
    lines = [linecache.getline(path, n).encode() for n in range(first, last + 1)]
    if not all(lines):
        return ""
    lines[-1] = lines[-1][:end]
    lines[0] = lines[0][start:]
    source = b"".join(lines).decode(errors="replace")
    try:
        node = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError):  # a NUL byte: ValueError on older Pythons
        return ""
    return source if isinstance(node, ast.Call) else ""


def parse_graph_break(
    payload: str,
    owner: Callable[[str], str] = frame_owner,
    catalogue: gb_catalogue.Catalogue | None = None,
) -> GraphBreakInfo:
    """Reason, location and hints of a ``dynamo_graph_break_reason`` artifact.

    Dynamo counts the frames it inlines as user code, so its own location for
    a break inside ``opt.step()`` is torch/optim/optimizer.py. The location
    given is the innermost frame of the user's traceback in the user's own
    files (else in another library, e.g. transformers); Dynamo's is the detail.
    The id is the one Dynamo links to, else ``catalogue``'s (the installed torch's).
    """
    text = payload or ""
    m = _GB_AT_RE.search(text)
    dynamo_at = f"{m.group(1)}:{m.group(2)}" if m else ""
    user = text.split("User code traceback:", 1)
    frames = _GB_FILE_RE.findall(user[1].split("\n\n", 1)[0]) if len(user) > 1 else []
    location = ""
    for wanted in ("user", "library"):
        found = [f"{path}:{line}" for path, line in frames if owner(path) == wanted]
        if found:
            location = found[-1]
            break
    innermost = dynamo_at or (f"{frames[-1][0]}:{frames[-1][1]}" if frames else "")
    location = location or innermost
    detail = innermost if innermost != location else ""
    reason = ""
    if "Graph Break Reason:" in text:
        after = text.split("Graph Break Reason:", 1)[1]
        head = after.split("Explanation:", 1)[0] if "Explanation:" in after else after
        # A break inside a higher-order op (an autograd.Function's forward) has
        # Dynamo's "Higher Order Operator: NAME" line after its type: context,
        # not the type (torch._dynamo.exc.augment_exc_message_with_hop_name).
        lines = [
            ln.strip()
            for ln in head.splitlines()
            if ln.strip() and not ln.strip().startswith(HOP_LINE)
        ]
        # The last line before "Explanation:" is the break type ("Data-dependent
        # branching", "Unsupported Tensor.backward() call"); the first line may
        # be a generic "Encountered graph break when ...".
        if lines:
            reason = lines[-1] if "Explanation:" in after else lines[0]
    if not reason:
        reason = next((ln.strip() for ln in text.splitlines() if ln.strip()), "graph break")
    hints = []
    for ln in text.split("User code traceback:", 1)[0].splitlines():
        s = ln.strip()
        if s.startswith("Hint:"):
            hints.append(s[len("Hint:") :].strip())
    gb_id, link = gb_catalogue.identify(gb_catalogue.id_in(text)[0], reason, catalogue)
    delayed = _DELAYED_RE.search(text) if reason.endswith("(delayed)") else None
    if delayed:
        # A delayed break (torch 2.15's for an LSTM) names its cause only in the
        # explanation: "... Reason: Dynamo does not support RNN. Set ... to ...".
        cause, _, advice = delayed.group(1).strip().partition(". ")
        reason = f"{reason}: {cause.rstrip('.')}"
        hints = hints or ([advice.rstrip(".")] if advice else [])
    context = _GB_CONTEXT_RE.search(text)
    return GraphBreakInfo(
        reason, location, hints, detail, gb_id, link, context.group(1).strip() if context else ""
    )


def parse_recompile_reasons(payload: str | None) -> list[str]:
    """One reason per failed cache entry; the payload is a JSON list or a bare line."""
    if not payload:
        return []
    try:
        data = json.loads(payload)
    except ValueError:
        data = payload
    if isinstance(data, list):
        return [str(x) for x in data if str(x).strip()]
    return [str(data).strip()] if str(data).strip() else []


# A record's payload: its text, or, handed over live, the dict torch made (a
# phase's event) or would JSON-encode (a cache lookup's; worker/probes/trace.py).
Payload = str | dict[str, Any] | None


def parse_chromium(payload: Payload) -> dict[str, Any] | None:
    if isinstance(payload, dict):
        return payload
    return json_object(payload) if payload else None


def json_object(text: str | bytes) -> dict[str, Any] | None:
    """The JSON object ``text`` holds (bytes read as UTF-8, as a text file
    reads them), else None: ``json.loads`` without its Python-level steps (it
    runs on every record of every log an import reads)."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    try:
        value, end = _SCAN(text, 0 if text[:1] == "{" else len(text) - len(text.lstrip(_SPACE)))
    except (StopIteration, ValueError):
        return None
    if end != len(text) and text[end:].strip(_SPACE):
        return None  # more after the object
    return value if isinstance(value, dict) else None


_SCAN = make_scanner(cast(Any, json.JSONDecoder()))  # the C scanner json.loads runs
_SPACE = " \t\n\r"  # json's whitespace


def is_limit_failure(record: dict[str, Any]) -> bool:
    reason = str(record.get("fail_reason") or "").lower()
    return bool(record.get("fail_type")) and any(t in reason for t in _LIMIT_TEXT)


_WARN_FN_RE = re.compile(r"function: '([^']+)'(?: \(([^)]*)\))?")
_WARN_LIMIT_RE = re.compile(r"recompile_limit \((\d+)\)|cache_size_limit \((\d+)\)")


@data(frozen=True)
class LimitWarning:
    """Dynamo's "hit config.recompile_limit" warning, read."""

    function: str
    limit: int | None
    location: str  # "file:line" of the function, "" when not named


def parse_limit_warning(message: str) -> LimitWarning | None:
    """The function, the limit and where the function is, else None."""
    low = message.lower()
    if not any(t in low for t in _LIMIT_TEXT):
        return None
    fn = _WARN_FN_RE.search(message)
    lim = _WARN_LIMIT_RE.search(message)
    limit = int(next(g for g in lim.groups() if g)) if lim else None
    return LimitWarning(fn.group(1) if fn else "?", limit, (fn.group(2) or "") if fn else "")


def failed_at(record: dict[str, Any]) -> str:
    """A failed compile's "file:line": torch's user frame of the failure, else the
    first line of the function it was compiling; "" when the record names neither."""
    for file, line in (
        ("fail_user_frame_filename", "fail_user_frame_lineno"),
        ("co_filename", "co_firstlineno"),
    ):
        if record.get(file) and record.get(line) is not None:
            return f"{record[file]}:{record[line]}"
    return ""


def compile_wall_s(record: dict[str, Any]) -> float:
    """The compile's wall from the first of torch's fields that holds it (each
    torch writes some); 0.0 when none does."""
    if record.get("duration_us") is not None:
        return float(record["duration_us"]) / 1e6
    if record.get("entire_frame_compile_time_s") is not None:
        return float(record["entire_frame_compile_time_s"])
    start, end = record.get("start_time_us"), record.get("end_time_us")
    if start is not None and end is not None:
        return (float(end) - float(start)) / 1e6
    if record.get("dynamo_cumulative_compile_time_us") is not None:
        return float(record["dynamo_cumulative_compile_time_us"]) / 1e6
    if record.get("inductor_compile_time_s") is not None:
        return float(record["inductor_compile_time_s"])
    return 0.0


def restart_is_graph_break(reason: str) -> bool:
    """Whether Dynamo restarted a frame's analysis at a graph break (the
    restart then carries the break's reason), rather than for its own ends
    (torch names those by their exception class, or not at all)."""
    return not reason.startswith("<class ") and reason != "Unknown fail_and_restart_analysis"


def combine_cache_states(states: list[str]) -> str | None:
    if not states:
        return None
    if "miss" in states:
        return "miss"
    if all(s == "hit" for s in states):
        return "hit"
    return "bypass"


def first_line(text: Any) -> str | None:
    """The first line, plus the next when the first only introduces it ("... raised:")."""
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    if not lines:
        return None
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


@data(frozen=True)
class CacheLookup:
    """One ``aotautograd_cache_*`` / ``fx_graph_cache_*`` record read."""

    layer: str  # "aotautograd" | "fx_graph"
    state: str  # "hit" | "miss" | "bypass"
    key: str
    detail: str
    reason: str
    saved_s: float | None
    parts: dict[str, str]
    graph_ops: int | None


CACHE_LAYERS = {"aotautograd_cache_": "aotautograd", "fx_graph_cache_": "fx_graph"}
# Longer component values are kept as their hash only.
_SHORT = 100
_HASH = 10  # of 52 base32 characters: enough to tell two values apart
_COMPONENT_RE = re.compile(r"\[(\w+)\] ([^:]+): (.*)", re.S)
_TENSOR_FIELDS = ("dtype", "shape", "stride", "device", "requires_grad")
_TENSOR_FIELD_RE = re.compile(
    r"\b(dtype|shape|stride|device|requires_grad)=(torch\.Size\(\[[^\]]*\]\)|\([^)]*\)\)?|[^,]+)"
)


def parse_cache_lookup(name: str, payload: Payload) -> CacheLookup | None:
    """The layer, state, key, what a hit saved and the key's components of one
    cache record (its JSON, or, handed over live, the dict torch encodes);
    None for a name that is no cache lookup."""
    layer = next((v for k, v in CACHE_LAYERS.items() if name.startswith(k)), None)
    if layer is None:
        return None
    try:
        d = payload if isinstance(payload, dict) else json.loads(payload) if payload else {}
    except ValueError:
        d = {}
    d = d if isinstance(d, dict) else {}
    saved: float | None = None
    if d.get("time_saved_ns") is not None:
        saved = float(d["time_saved_ns"]) / 1e9
    elif d.get("time_saved_ms") is not None:
        saved = float(d["time_saved_ms"]) / 1e3
    parts, ops = key_parts(d.get("components") or [])
    return CacheLookup(
        layer=layer,
        state=name.rsplit("_", 1)[-1],
        key=str(d.get("key") or ""),
        detail=str(d.get("cache_status_detailed") or ""),
        reason=first_line(d.get("cache_bypass_reason")) or "",
        saved_s=saved,
        parts=parts,
        graph_ops=ops,
    )


def key_parts(components: list[Any]) -> tuple[dict[str, str], int | None]:
    """Inductor's key components ("[hash] name: value") as name -> "hash value":
    the hash (shortened) is what is compared, since a value's words may differ
    where its hash does not (an address); the value is kept where it is short
    and printable, an input's TensorMetadata as its dtype, shape, stride,
    device and requires_grad. Also the op count of the graph ("gm") in it."""
    parts: dict[str, str] = {}
    ops = None
    for c in components:
        read = _READ.get(c) if isinstance(c, str) else None
        if read is None:
            read = _read_component(str(c))
        if read:
            part, text, count = read
            parts[part] = text
            ops = count if count is not None else ops
    return parts, ops


# Each short component read once per process: ~600 of a lookup's ~640 are
# Inductor's config, the same in every lookup (bounded: an import reads many
# processes'; a graph's own components are long, and kept apart).
_READ: dict[str, tuple[str, str, int | None] | tuple[()]] = {}
_READ_MAX, _READ_LEN = 20_000, 400


def _read_component(c: str) -> tuple[str, str, int | None] | tuple[()]:
    """(name, "hash value", the op count where it is the graph), () where it is no component."""
    m = _COMPONENT_RE.match(c)
    read: tuple[str, str, int | None] | tuple[()] = ()
    if m is not None:
        digest, part, value = m.group(1)[:_HASH], m.group(2).strip(), m.group(3)
        ops = value.count("torch.ops.") if part == "gm" else None
        if part.startswith("example_inputs") and "TensorMetadata(" in value:
            fields = dict(_TENSOR_FIELD_RE.findall(value))
            value = " ".join(f"{f}={fields[f]}" for f in _TENSOR_FIELDS if f in fields)
        elif len(value) > _SHORT or not value.isprintable():
            value = ""
        read = (part, f"{digest} {value}", ops)
    if len(c) <= _READ_LEN:
        if len(_READ) >= _READ_MAX:
            _READ.clear()
        _READ[c] = read
    return read
