"""Screenshots of the TUI's main screens, as SVG and PNG, into screenshots/.

    .venv/bin/python scripts/screenshots.py            # from the recorded sessions
    .venv/bin/python scripts/screenshots.py --imported # only the Ranks view of a real
                                                       # 2-rank job's TORCH_TRACE, widened to
                                                       # 1,024 ranks and imported
    .venv/bin/python scripts/screenshots.py --cache    # only a real warm start that half
                                                       # missed: its cache layers and why
    .venv/bin/python scripts/screenshots.py --live     # also a real compile, caught mid-way,
                                                       # a real program (examples/train_gpt2.py)
                                                       # a real 2-rank torchrun job and a
                                                       # real warm start that half missed

The recorded sessions are tests/fixtures/*.jsonl (real runs, recorded by
scripts/record_fixtures.py), replayed deterministically. SVGs come from
Textual's ``save_screenshot`` under ``run_test``; PNGs from headless Chromium
(with fonts-firacode: rsvg shifts cells and cairosvg loses the font).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlcprof import events as ev  # noqa: E402
from dlcprof.session import Session  # noqa: E402
from dlcprof.settings import RunSettings  # noqa: E402
from dlcprof.tui.app import DlcprofApp  # noqa: E402

# One way to drive headless Chromium, shared with the HTML report check.
sys.path.insert(0, str(ROOT / "scripts"))
from check_html import check_page, find_chromium  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
RECORDED = ["pointwise_chain", "graph_breaks", "variable_length_static", "variable_length_dynamic"]
SIZE = (160, 48)

Step = Callable[[DlcprofApp, object], Awaitable[None]]


def recorded_session(names: list[str] = RECORDED) -> Session:
    events: list[ev.Event] = []
    for name in names:
        path = FIXTURES / f"{name}.jsonl"
        events += [ev.decode(line) for line in path.read_text().splitlines() if line.strip()]
    return Session.from_events(events)


def paper_session() -> Session:
    """A session as `dlcprof paper --quick` makes one, from the recorded runs."""
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers.paper import paper_events

    return Session.from_events(paper_events())


def run_id(app: DlcprofApp, workload: str, dynamic: str | None = None) -> str:
    for run in app.session.runs.values():
        if run.workload == workload and dynamic in (None, getattr(run.settings, "dynamic", None)):
            return run.run_id
    raise SystemExit(f"no {workload} run in the recorded sessions")


def showing(workload: str, tab: str, dynamic: str | None = None, keys: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    async def step(app: DlcprofApp, pilot) -> None:  # type: ignore[no-untyped-def]
        app.select_run(run_id(app, workload, dynamic))
        app.show_tab(tab)
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3)

    return step


async def paper_screen(app: DlcprofApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("P")
    await pilot.pause(0.5)


# name -> (the session, how to get there, what it shows)
REPLAYED: dict[str, tuple[Callable[[], Session], Step, str]] = {
    "main": (
        recorded_session,
        showing("pointwise-chain", "recompiles"),
        "fusion run: phases, the kernel with its time, benchmark",
    ),
    "kernel-source": (
        recorded_session,
        showing("pointwise-chain", "recompiles", keys=("enter",)),
        "kernel figures and source",
    ),
    "recompiles": (
        recorded_session,
        showing("variable-length", "recompiles", "false"),
        "static vs dynamic sweep",
    ),
    "graph-breaks": (recorded_session, showing("graph-breaks", "log"), "graph breaks in the log"),
    "allocator": (
        lambda: recorded_session(["pointwise_chain_allocator"]),
        showing("pointwise-chain", "recompiles"),
        "default-size run: both speedups, page faults, the allocator verdict",
    ),
    "modes": (
        lambda: recorded_session(["gelu_mlp_modes"]),
        showing("gelu-mlp", "modes"),
        "every mode side by side",
    ),
    "paper": (paper_session, paper_screen, "the paper's findings beside this machine's"),
    "help": (
        recorded_session,
        showing("pointwise-chain", "recompiles", keys=("question_mark",)),
        "keys",
    ),
    "kernels-sorted-filtered": (
        recorded_session,
        showing(
            "variable-length", "recompiles", "false", ("3", "o", "o", "slash", *"sweep", "enter")
        ),
        "the Kernels table sorted by kernel (o o) and filtered (/ sweep): 10 of 12",
    ),
    "light": (
        recorded_session,
        showing("graph-breaks", "log", keys=("3",)),
        "--theme textual-light: stage colours, the log's marks, the accent frame",
    ),
}
THEME = {"light": "textual-light"}  # the others in Textual's default theme


async def shoot_replayed(out: Path) -> list[Path]:
    svgs = []
    for name, (session, step, _) in REPLAYED.items():
        app = DlcprofApp(session=session(), replay=True, deterministic=True, theme=THEME.get(name))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await step(app, pilot)
            svgs.append(Path(app.save_screenshot(str(out / f"{name}.svg"))))
    app = DlcprofApp(start_standby=False, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        svgs.append(Path(app.save_screenshot(str(out / "start.svg"))))
    return svgs


async def shoot_live(out: Path) -> list[Path]:
    """A real compile of a small workload, caught while it compiles, then its
    Device and Hotspots tabs once done (monitor samples only exist live)."""
    settings = RunSettings(target="layernorm-residual", size="small", reps=3, iters=5)
    app = DlcprofApp(target=settings.target, settings=settings)
    svgs = []
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 60
        while not app.runs.standby_ready and time.monotonic() < deadline:
            await pilot.pause(0.1)
        await pilot.press("r")
        deadline = time.monotonic() + 180
        while app.worker_state()[0] != "compiling" and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await pilot.pause(1.0)  # let a few phases land
        svgs.append(Path(app.save_screenshot(str(out / "live-compiling.svg"))))
        while app.runs.busy and time.monotonic() < deadline:
            await pilot.pause(0.2)
        for tab in ("device", "hotspots"):
            app.show_tab(tab)
            await pilot.pause(0.5)
            svgs.append(Path(app.save_screenshot(str(out / f"live-{tab}.svg"))))
    return svgs


async def shoot_program(out: Path) -> list[Path]:
    """``dlcprof -- python examples/train_gpt2.py``: a real program, caught once
    its first compiles finished and it trains on, then stopped."""
    from dlcprof.tui.app import DlcprofApp

    command = [sys.executable, str(ROOT / "examples" / "train_gpt2.py"), "--steps", "200"]
    app = DlcprofApp(command=command)
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 300
        # A few steps run: each graph's calls 2-4 are sampled (kernel times) and
        # the time per call and the timeline move on. (Not "its backward
        # compiled": from a warm cache the backward is loaded with its forward.)
        while (
            time.monotonic() < deadline
            and app.session.program_exit is None
            and not any(
                r.graph_calls and min(g["calls"] for g in r.graph_calls.graphs.values()) >= 5
                for r in app.session.runs.values()
            )
        ):
            await pilot.pause(0.5)
        if app.session.program_exit is not None:
            raise SystemExit(f"the program ended early: {app.session.program_exit.message}")
        svg = Path(app.save_screenshot(str(out / "live-program.svg")))
        program = app.program.spawned if app.program is not None else None
        assert program is not None
        program.stop(grace_s=5)
        program.wait(30)
    return [svg]


async def shoot_cache(out: Path) -> list[Path]:
    """``dlcprof -- python tests/programs/cache_key.py`` on the cache folder a
    first run of it filled, one Inductor setting changed for its graph g
    (FALLBACK_RANDOM=1): f hits (each cache layer, what the hit saved), g
    misses and the Phases pane, maximized, says why."""
    import os
    import subprocess
    import tempfile

    program = [sys.executable, str(ROOT / "tests" / "programs" / "cache_key.py")]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "inductor-cache")}
        subprocess.run(program, env=env, check=True, capture_output=True)  # the fill
        before = dict(os.environ)
        os.environ.update(env, FALLBACK_RANDOM="1")  # the program's environment
        try:
            app = DlcprofApp(command=program)
            async with app.run_test(size=SIZE) as pilot:
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline and app.session.program_exit is None:
                    await pilot.pause(0.5)
                await pilot.press("1", "z", "home")  # the Phases pane, whole, from its top
                await pilot.pause(1.0)
                return [Path(app.save_screenshot(str(out / "cache.svg")))]
        finally:
            os.environ.clear()
            os.environ.update(before)


async def shoot_ranks(out: Path) -> list[Path]:
    """``dlcprof -- torchrun --nproc-per-node 2 tests/programs/ddp_train.py
    --diverge-rank 1``: a real 2-rank job (gloo) where rank 1 alone changes its
    batch shape; its Ranks view, rank 1 shown, once the job ended."""
    from dlcprof.tui.app import DlcprofApp

    script = ROOT / "tests" / "programs" / "ddp_train.py"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc-per-node", "2", str(script), "--diverge-rank", "1", "--steps", "6"]
    app = DlcprofApp(command=command)
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and app.session.program_exit is None:
            await pilot.pause(0.5)
        if app.session.program_exit is None or app.session.program_exit.returncode != 0:
            raise SystemExit(f"the 2-rank job did not end well: {app.session.program_exit}")
        await pilot.press("right_square_bracket", "right_square_bracket", "R")  # rank 1
        await pilot.pause(1.0)
        return [Path(app.save_screenshot(str(out / "ranks.svg")))]


async def shoot_imported(out: Path, ranks: int = 1024) -> list[Path]:
    """``dlcprof import`` of a real 2-rank gloo job's TORCH_TRACE logs
    (tests/fixtures/torch_trace/ddp_odd_batch) widened to ``ranks`` ranks, rank
    1 the one that recompiled alone: its Ranks view, groups first."""
    import tempfile

    sys.path.insert(0, str(ROOT / "tests"))
    from helpers.torch_trace import rank_logs, trace_logs, widen

    from dlcprof.trace_import.job import import_trace

    with tempfile.TemporaryDirectory() as tmp:
        logs = rank_logs(trace_logs("ddp_odd_batch", Path(tmp) / "recorded"))
        session = import_trace([str(widen(logs, Path(tmp) / "wide", ranks, {1: 1}))])
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        await pilot.pause(1.0)
        return [Path(app.save_screenshot(str(out / "ranks-imported.svg")))]


def svg_size(svg: Path) -> tuple[int, int]:
    m = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text()[:2000])
    if m is None:
        raise SystemExit(f"{svg}: no viewBox")
    return int(float(m.group(1)) + 0.5), int(float(m.group(2)) + 0.5)


def to_png(svg: Path, chromium: str) -> Path:
    png = svg.with_suffix(".png")
    w, h = svg_size(svg)
    problems = check_page(chromium, svg.resolve(), png, w, h)
    if problems:
        raise SystemExit(f"{svg}: " + "; ".join(problems))
    return png


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--live", action="store_true", help="also screenshot a real compile")
    parser.add_argument("--no-png", action="store_true", help="SVG only (no Chromium)")
    parser.add_argument(
        "--imported", action="store_true", help="only the Ranks view of a 1,024-rank import"
    )
    parser.add_argument(
        "--cache", action="store_true", help="only a real warm start's cache layers and why"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    chromium = find_chromium()
    if args.imported:
        svgs = asyncio.run(shoot_imported(args.out))
    elif args.cache:
        svgs = asyncio.run(shoot_cache(args.out))
    else:
        svgs = asyncio.run(shoot_replayed(args.out))
    if args.live:
        svgs += asyncio.run(shoot_live(args.out))
        svgs += asyncio.run(shoot_program(args.out))
        svgs += asyncio.run(shoot_ranks(args.out))
        svgs += asyncio.run(shoot_cache(args.out))
    for svg in svgs:
        print(svg.relative_to(ROOT) if svg.is_relative_to(ROOT) else svg)
        if not args.no_png:
            if chromium is None:
                raise SystemExit("chromium missing: apt-get install -y chromium fonts-firacode")
            print(to_png(svg, chromium).relative_to(ROOT) if svg.is_relative_to(ROOT) else svg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
