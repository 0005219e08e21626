"""The divergence banner never names a frame of torch's own code (issue 29 item 9):
Dynamo's wrapper around the user's forward compiles first, before the user's line."""

from __future__ import annotations

from helpers.program import ddp_job, rank_attached, rank_compile

from dlcprof import events as ev
from dlcprof.figures.job import divergence as fdiv
from dlcprof.session import Session

WRAPPER = ("inner", "/venv/lib/python3.11/site-packages/torch/_dynamo/external_utils.py", 67)
WHY = "0/0: args[0] size mismatch at index 0. expected 8, actual 6"


def session(*events: ev.Event) -> Session:
    return Session.from_events(list(events))


def test_a_torch_wrapper_alone_is_worded_as_torch_not_the_users_line():
    """Only the wrapper has compiled on each rank, and rank 1 recompiles it: the
    banner says a frame inside torch, with the user's frame not compiled yet."""
    s = session(
        rank_attached(0),
        rank_attached(1),
        rank_compile(0, "0/0", 1002.0, 2.0, frame=WRAPPER),
        rank_compile(1, "0/0", 1002.0, 2.0, frame=WRAPPER),
        rank_compile(1, "0/1", 1008.0, 2.0, reason=WHY, frame=WRAPPER),
    )
    banner = fdiv.alarms(fdiv.divergences(s, now=1030.0))[0]
    assert banner.subject == "0/1" and banner.in_torch
    assert "inner" not in banner.headline
    assert banner.headline.startswith(
        "rank 1 recompiled 0/1, a frame inside torch (torch/_dynamo/external_utils.py:67, "
        "torch's wrapper), the user's frame not compiled yet (the others did not)"
    )


def test_a_torch_wrapper_points_at_the_users_frame_the_rank_compiled():
    """The rank compiled the user's forward before: the wrapper's recompile is named
    as torch's wrapper around that frame, whichever rank lacks it."""
    s = session(*ddp_job(finished=False))
    s.apply(rank_compile(1, "1/0", 1010.0, 2.0, frame=WRAPPER))
    banner = fdiv.alarms(fdiv.divergences(s, now=1030.0))[0]
    assert banner.subject == "1/0" and "inner" not in banner.headline
    assert "torch's wrapper around forward at /home/u/train.py:24" in banner.headline
    # Three ranks, one lacking the wrapper's compile: the same words.
    s = session(*ddp_job(ranks=3, finished=False))
    for r in (0, 1):
        s.apply(rank_compile(r, "1/0", 1010.0, 2.0, frame=WRAPPER))
    banner = fdiv.alarms(fdiv.divergences(s, now=1030.0))[0]
    assert banner.headline.startswith("rank 2 did not compile 1/0, torch's wrapper around forward")
