"""The warm-start rules: an attached program's compiles that missed torch's
caches and what would have let them hit: a kept cache folder where it was
torch's default under /tmp (which a container loses), Mega-Cache artifacts
where it started on a new or empty folder (a fresh machine of a fleet); and,
against a baseline (the job that filled the cache), the settings that differ
between the two (``dlcprof compare``). The
predicted saving is the missed compiles' measured backend seconds (AOTAutograd
and Inductor: what a hit loads instead of compiling); Dynamo traces again in
every process either way, and a hit's load is not free (its seconds are only
known once it hits). ``dlcprof try`` measures the first two: the program run
twice, a cold fill then the warm start (figures/advice/trial.py)."""

from __future__ import annotations

from dlcprof import text
from dlcprof.figures.advice.model import Advice, Prediction
from dlcprof.figures.advice.trial import KEPT_FOLDER, MEGA_CACHE
from dlcprof.figures.cache_misses import Miss, cold_folder, default_temp_folder, misses
from dlcprof.session import Run, Session

MEGA_CACHE_SNIPPET = (
    "artifacts = torch.compiler.save_cache_artifacts()  # after the first compiled step\n"
    "open(PATH, 'wb').write(artifacts[0])  # ship PATH with the image or a kept volume\n"
    "torch.compiler.load_cache_artifacts(open(PATH, 'rb').read())  # before it, at each start"
)


def _backend_s(run: Run, compile_id: str) -> float | None:
    c = run.compiles.get(compile_id)
    metrics = c.record.metrics if c is not None and c.record is not None else {}
    backend = metrics.get("backend_compile_time_s")
    return float(backend) if isinstance(backend, (int, float)) else None


def _prediction(run: Run, found: list[Miss]) -> Prediction | None:
    """Each missed compile's seconds, and the same with its backend compile
    (AOTAutograd and Inductor) replaced by a hit's load as this run's hits
    measured it (not counted where it made none); None when torch timed none."""
    walls, backends = 0.0, 0.0
    for m in found:
        c, backend = run.compiles.get(m.compile_id), _backend_s(run, m.compile_id)
        if c is None or c.wall_s is None or backend is None:
            return None
        walls, backends = walls + c.wall_s, backends + min(backend, c.wall_s)
    if not found or walls <= 0:
        return None
    missed = {m.compile_id for m in found}
    hit = {e.compile_id for e in run.cache_lookups if e.state == "hit"} - missed
    loads = [b for b in (_backend_s(run, cid) for cid in hit if cid) if b is not None]
    how = "each missed compile's AOTAutograd and Inductor seconds, loaded instead on a hit"
    if loads:
        load = sum(loads) / len(loads) * len(found)
        how += f" ({text.secs(load)}: this run's hits' mean load)"
    else:
        load = 0.0
        how += " (the load not counted: no hit in this run measured one)"
    return Prediction("compile", walls, walls - backends + load, how)


def _missed(run: Run) -> tuple[list[Miss], Prediction | None]:
    found = misses(run)
    return found, _prediction(run, found)


def _evidence(found: list[Miss], predicted: Prediction | None) -> list[str]:
    seconds = (
        f" ({text.secs(predicted.before_s)} of compile)"
        if predicted
        else " (not timed: n/a saving)"
    )
    return [f"{text.plural(len(found), 'compile')} missed the caches{seconds}"]


def kept_folder(session: Session, run: Run, calls: int) -> Advice | None:
    """The cache folder was torch's default under /tmp: a container restart loses it."""
    folder = default_temp_folder(run)
    if folder is None or not run.cache_lookups:
        return None
    found, predicted = _missed(run)
    hits = [e for e in run.cache_lookups if e.state == "hit"]
    evidence = [f"Inductor's cache folder is torch's default {folder}"]
    evidence += _evidence(found, predicted) if found else []
    if hits:
        evidence.append(
            f"{text.plural(len(hits), 'lookup')} hit there: a new container misses them"
        )
    return Advice(
        rule="cache-folder",
        title="keep Inductor's cache on a kept volume (TORCHINDUCTOR_CACHE_DIR)",
        change=(
            "set TORCHINDUCTOR_CACHE_DIR to a folder that outlives the container "
            "(a mounted volume), the same for the job that fills it and the ones that read it"
        ),
        evidence=evidence,
        cost="the volume's space; entries are tied to the torch build, device and settings",
        predicted=predicted,
        snippet="export TORCHINDUCTOR_CACHE_DIR=/mnt/kept/inductor-cache",
        options={"cache": KEPT_FOLDER},
    )


def mega_cache(session: Session, run: Run, calls: int) -> Advice | None:
    """The run started on a new or empty cache folder and missed: a fresh
    machine that Mega-Cache artifacts made elsewhere would start warm."""
    cold = cold_folder(run)
    found, predicted = _missed(run)
    if cold is None or not found:
        return None
    return Advice(
        rule="mega-cache",
        title="ship Mega-Cache artifacts to fresh machines (save_cache_artifacts)",
        change=(
            "save torch's compile artifacts once, where the program compiled, and load them "
            "before the first compiled step on every fresh machine"
        ),
        evidence=[cold, *_evidence(found, predicted)],
        cost="the artifacts are tied to this torch version, device and model code",
        predicted=predicted,
        snippet=MEGA_CACHE_SNIPPET,
        options={"cache": MEGA_CACHE},
    )


SETTING_CAUSES = ("Inductor setting `", "compile option `")


def fill_setting(run: Run, base: Run) -> Advice | None:
    """``run``'s misses that a setting differing from ``base``'s (the job that
    filled the cache) explains: the two jobs' settings made the same."""
    found = [m for m in misses(run, base) if any(c.startswith(SETTING_CAUSES) for c in m.causes)]
    if not found:
        return None
    settings = dict.fromkeys(c for m in found for c in m.causes if c.startswith(SETTING_CAUSES))
    predicted = _prediction(run, found)
    return Advice(
        rule="cache-setting",
        title="compile with the settings of the job that filled the cache",
        change=(
            "set the same Inductor settings and compile options in the job that fills the "
            "cache and in the ones that read it (each is part of the cache key)"
        ),
        evidence=[*settings, *_evidence(found, predicted)],
        cost="the setting's own effect on the compiled code, in one of the two jobs",
        predicted=predicted,
    )
