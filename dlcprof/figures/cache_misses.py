"""Why a compile missed torch's caches, in the user's words: each lookup torch
logged (AOTAutograd's cache, Inductor's FX graph cache) with the components of
its key, a miss set against the same lookup in a baseline run ("Inductor
setting `fallback_random` False → True", "torch 2.13.0 → 2.15.0", "the graph
changed: 1 op more (2 → 3)", "input 0's dtype torch.float32 → torch.bfloat16"),
else against what one run can know of itself (a new or empty cache folder).
Never a hash: the hashes only tell which components differ."""

from __future__ import annotations

import os
import re
import tempfile

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import phases as fp
from dlcprof.session import Run

LAYERS = {"aotautograd": "AOTAutograd cache", "fx_graph": "FX graph cache"}
# Causes shown per miss; the rest counted.
SHOWN = 4
FOLDER_STATES = {
    "missing": "a new cache folder (cold): this run's TORCHINDUCTOR_CACHE_DIR did not exist",
    "empty": "an empty cache folder (cold)",
}
# An input as the key keeps it: "dtype=torch.float32 shape=torch.Size([4]) stride=(1,) ...".
_INPUT_SPLIT_RE = re.compile(r" (?=(?:dtype|shape|stride|device|requires_grad)=)")


@data(frozen=True)
class Miss:
    """One compile whose cache lookups missed, and why."""

    compile_id: str
    layers: list[str]  # the layers that missed, as LAYERS names them
    causes: list[str]  # the user's words, most telling first

    def words(self) -> str:
        shown = self.causes[:SHOWN]
        more = len(self.causes) - len(shown)
        why = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
        return f"cache miss ({', '.join(self.layers)}): {why}"


def torch_version(run: Run) -> str | None:
    if run.settings is not None:
        return run.settings.torch_version
    return run.process.torch_version if run.process is not None else None


def cache_folder(run: Run) -> str | None:
    return run.process.cache_dir if run.process is not None else None


def _indexed(run: Run) -> dict[tuple[str | None, str, int], ev.CacheLookedUp]:
    """Each lookup by (compile id, layer, its order among that compile's lookups of the layer)."""
    out: dict[tuple[str | None, str, int], ev.CacheLookedUp] = {}
    seen: dict[tuple[str | None, str], int] = {}
    for e in run.cache_lookups:
        n = seen[(e.compile_id, e.layer)] = seen.get((e.compile_id, e.layer), -1) + 1
        out[(e.compile_id, e.layer, n)] = e
    return out


def misses(run: Run, base: Run | None = None, ref: str = "the baseline") -> list[Miss]:
    """Each compile that missed a cache, explained against ``base`` (its run in a
    baseline session, or another rank's run, as ``ref`` names it) where given,
    else by what this run alone shows."""
    lookups = _indexed(run)
    base_lookups = _indexed(base) if base is not None else {}
    by_compile: dict[str, list[tuple[int, ev.CacheLookedUp]]] = {}
    for (cid, _, n), e in lookups.items():
        if e.state == "miss":
            by_compile.setdefault(cid or "?", []).append((n, e))
    out = []
    for cid, missed in by_compile.items():
        causes: list[str] = []
        # Inductor's lookups name their components; AOTAutograd's only its key.
        for n, e in sorted(missed, key=lambda m: m[1].layer != "fx_graph"):
            if causes and e.layer == "aotautograd":
                break  # the FX graph's causes are the AOTAutograd entry's too
            if base is None:
                causes += [c for c in alone(run) if c not in causes]
            else:
                then = base_lookups.get((e.compile_id, e.layer, n))
                causes += [c for c in against(e, then, run, base, ref) if c not in causes]
        layers = list(dict.fromkeys(LAYERS[e.layer] for _, e in missed))
        out.append(Miss(cid, layers, causes or ["not known"]))
    return out


def unseen(run: Run) -> str | None:
    """Why a run's misses cannot be counted: it made graphs but torch logged no
    cache lookup (None when it did, or made none)."""
    graphs = [
        c
        for c in run.compiles.values()
        if c.record is not None and not c.is_backward and (c.record.graph_op_count or 0) > 0
    ]
    if not graphs or run.cache_lookups:
        return None
    return (
        f"n/a: torch logged no cache lookup for its {text.plural(len(graphs), 'graph')} (the "
        "graph caches are off, the backend is not Inductor, or the trace probe was unavailable)"
    )


def alone(run: Run) -> list[str]:
    """Why a run missed, from what it knows of itself."""
    cold = cold_folder(run)
    if cold is not None:
        return [cold]
    folder = cache_folder(run)
    if run.settings is not None and run.settings.cache in ("cold", "fresh"):
        return [f"a fresh cache folder (--cache {run.settings.cache})"]
    where = f" {folder}" if folder else ""
    return [
        f"no entry for its key in the cache folder{where} (dlcprof compare A B, A a session "
        "that filled the cache, names what changed)"
    ]


def against(
    e: ev.CacheLookedUp,
    then: ev.CacheLookedUp | None,
    run: Run,
    base: Run,
    ref: str = "the baseline",
) -> list[str]:
    """Why lookup ``e`` missed where ``ref``'s lookup ``then`` was made."""
    if then is None:
        return [f"compile {e.compile_id} made no such lookup in {ref}"]
    if e.key and e.key == then.key:
        # The same key: the entry was not in this run's folder, a new one first.
        if run.process is not None and run.process.cache_dir_state in FOLDER_STATES:
            return alone(run)
        now_dir, then_dir = cache_folder(run), cache_folder(base)
        if now_dir and then_dir and now_dir != then_dir:
            return [f"the same key, in another cache folder: {then_dir} → {now_dir}"]
        return [
            f"the same key as {ref}'s, yet not in the cache folder: "
            f"its entry was removed, or {ref}'s run wrote it elsewhere"
        ]
    if not e.parts or not then.parts:
        what = "Inductor" if e.layer == "fx_graph" else "torch"
        return [f"the {LAYERS[e.layer]}'s key changed ({what} logged no components for it)"]
    causes = []
    for name in sorted(set(e.parts) | set(then.parts), key=_order):
        a, b = then.parts.get(name), e.parts.get(name)
        if a is None or b is None or _digest(a) != _digest(b):
            causes += part_changed(name, a, b, e, then, run, base)
    return causes or ["the key changed, though every component torch logged is the same"]


def _digest(stored: str) -> str:
    return stored.partition(" ")[0]


def _value(stored: str | None) -> str:
    return stored.partition(" ")[2] if stored else ""


def _order(name: str) -> tuple[int, str]:
    """The graph first, then its inputs, torch and the system, the settings, the rest."""
    for i, prefix in enumerate(("gm", "example_inputs", "torch_version", "system_info")):
        if name.startswith(prefix):
            return i, name
    return (4 if name.startswith("inductor_config") else 5), name


def part_changed(
    name: str,
    then: str | None,
    now: str | None,
    e: ev.CacheLookedUp,
    before: ev.CacheLookedUp,
    run: Run,
    base: Run,
) -> list[str]:
    """One differing key component, in words (one line per differing field)."""
    a, b = _value(then), _value(now)
    change = f"{a} → {b}" if a and b else ("new" if then is None else "gone" if now is None else "")
    change = f" {change}" if change else " changed"
    if name == "gm":
        ops = (before.graph_ops, e.graph_ops)
        if ops[0] is not None and ops[1] is not None and ops[0] != ops[1]:
            more = ops[1] - ops[0]
            n = text.plural(abs(more), "op")
            return [
                f"the graph changed: {n} {'more' if more > 0 else 'fewer'} ({ops[0]} → {ops[1]})"
            ]
        return ["the graph changed"]
    m = re.fullmatch(r"example_inputs\[(\d+)\]", name)
    if m:
        fa, fb = _input_fields(a), _input_fields(b)
        fields = [f for f in dict.fromkeys([*fa, *fb]) if fa.get(f) != fb.get(f)]
        if not fields:
            return [f"input {m.group(1)}'s metadata changed"]
        return [f"input {m.group(1)}'s {f} {fa.get(f, '?')} → {fb.get(f, '?')}" for f in fields]
    if name == "torch_version":
        va, vb = torch_version(base), torch_version(run)
        if va and vb and va != vb:
            return [f"torch {va} → {vb}"]
        return ["torch changed (another build of the same version)"]
    if name.startswith("system_info"):
        return ["the system changed (Inductor's system_info: device, driver, compiler)"]
    m = re.fullmatch(r"inductor_config\[(.+)\]", name)
    if m:
        return [f"Inductor setting `{m.group(1)}`{change}"]
    m = re.fullmatch(r"fx_kwargs\[(.+)\]", name)
    if m:
        return [f"compile option `{m.group(1)}`{change}"]
    return [f"`{name}`{change}"]


def _input_fields(value: str) -> dict[str, str]:
    pairs = (f.partition("=") for f in _INPUT_SPLIT_RE.split(value) if "=" in f)
    return {k: v for k, _, v in pairs}


def cold_folder(run: Run) -> str | None:
    """The run's cache folder was new or empty, in words; None when not, or not known."""
    state = run.process.cache_dir_state if run.process is not None else None
    return f"{FOLDER_STATES[state]} ({cache_folder(run)})" if state in FOLDER_STATES else None


def default_temp_folder(run: Run) -> str | None:
    """The run's cache folder where it is torch's default under the temporary
    folder (which a container loses); None otherwise."""
    folder = cache_folder(run)
    temp = (os.path.join(tempfile.gettempdir(), ""), "/tmp/")
    if folder and os.path.basename(folder).startswith("torchinductor_") and folder.startswith(temp):
        return folder
    return None


def folder_note(run: Run) -> str | None:
    """What one run knows of its cache folder that a warm start depends on: a new
    or empty one, torch's default under /tmp (which a container loses)."""
    cold = cold_folder(run)
    if cold is not None:
        return cold
    folder = default_temp_folder(run)
    if folder is not None:
        return (
            f"Inductor's cache is torch's default folder {folder}, under the temporary "
            "folder a container loses: set TORCHINDUCTOR_CACHE_DIR to a kept volume"
        )
    return None


def layers_words(run: Run, compile_id: str) -> str | None:
    """A compile's lookups, each layer's state: "AOTAutograd cache hit (saved 20.0 s)
    · FX graph cache hit · kernel builds: none", a bypass with its reason; None
    when torch logged none."""
    words = []
    for e in run.cache_lookups:
        if e.compile_id != compile_id:
            continue
        word = f"{LAYERS[e.layer]} {e.state}"
        if e.state == "hit" and e.saved_s is not None:
            word += f" (saved {text.secs(e.saved_s)})"
        if e.reason:
            word += f" ({e.reason})"
        words.append(word)
    return " · ".join([*words, builds_words(run, compile_id)]) if words else None


def builds_words(run: Run, compile_id: str) -> str:
    """The kernel code cache, as torch times it: each ``compile_file`` is a C++ or
    Triton module built, not found in the cache folder (an FX graph hit on a
    folder that lacks the built modules, Mega-Cache's on a new one, builds them
    again); torch logs no lookup for a module it found."""
    c = run.compiles.get(compile_id)
    builds = [p for p in c.phases if p.name == fp.COMPILE_FILE] if c is not None else []
    done = c is not None and c.finished  # a compile in progress may build more
    if not builds:
        return "kernel builds: none" if done else "kernel builds: none yet"
    words = f"kernel builds: {len(builds)} ({text.secs(sum(p.duration_s for p in builds))})"
    return words if done else f"{words} so far"


def miss_of(
    run: Run, compile_id: str, base: Run | None = None, ref: str = "the baseline"
) -> Miss | None:
    """The compile's miss, explained (``misses``), or None when it did not miss."""
    return next((m for m in misses(run, base, ref) if m.compile_id == compile_id), None)


def cache_lines(run: Run, compile_id: str) -> list[str]:
    """What a view says under a compile: its cache layers, and why it missed."""
    layers, miss = layers_words(run, compile_id), miss_of(run, compile_id)
    return [
        *([f"caches: {layers}"] if layers else []),
        *([f"why it missed: {'; '.join(miss.causes)}"] if miss else []),
    ]


def saved_s(run: Run) -> float | None:
    """Seconds the hits saved by torch's account (the AOTAutograd entry's where
    it hit, since it holds its FX graphs'); None when torch logged none."""
    aot: dict[str | None, float] = {}
    fx: dict[str | None, float] = {}
    for e in run.cache_lookups:
        if e.state == "hit" and e.saved_s is not None:
            into = aot if e.layer == "aotautograd" else fx
            into[e.compile_id] = into.get(e.compile_id, 0.0) + e.saved_s
    if not aot and not fx:
        return None
    return sum({**fx, **aot}.values())
