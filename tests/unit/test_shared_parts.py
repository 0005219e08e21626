"""A cache lookup's key components in session.json: written against the lookup
of its layer before it, read back whole; a reference that cannot be followed
is one line naming the event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.program import process_attached

from dlcprof import events as ev
from dlcprof.report.errors import ReportError
from dlcprof.report.folder import save_session
from dlcprof.report.load import load_session
from dlcprof.report.shared_parts import expand, share
from dlcprof.session import Session

# Inductor's settings, the same in every lookup of a process, as the key logs them.
SETTINGS = {f"inductor_config[option_{i}]": f"h{i:09d} False" for i in range(300)}


def _lookup(cid: str, layer: str = "fx_graph", **parts: str) -> ev.CacheLookedUp:
    whole = {**SETTINGS, **parts} if layer == "fx_graph" else {}
    return ev.CacheLookedUp(run_id="t", compile_id=cid, layer=layer, state="hit", parts=whole)


def _session(*lookups: ev.CacheLookedUp) -> Session:
    s = Session()
    s.apply(process_attached(1, run_id="t"))
    for e in lookups:
        s.apply(e)
    return s


def test_keys_are_written_against_the_one_before_and_read_back_whole(tmp_path: Path) -> None:
    g0 = _lookup("0/0", gm="aaaaaaaaaa 3 ops", **{"example_inputs[0]": "bbbbbbbbbb shape=[4]"})
    aot = _lookup("1/0", layer="aotautograd")
    # Another graph: its graph and input changed, an input more, a setting gone.
    g1 = _lookup("1/0", gm="cccccccccc 5 ops", **{"example_inputs[1]": "dddddddddd shape=[8]"})
    del g1.parts["inductor_config[option_7]"]
    session = _session(g0, aot, g1)
    folder = save_session(session, tmp_path / "r")
    written = json.loads((folder / "session.json").read_text())["events"]
    first, second = (e for e in written if e["type"] == "CacheLookedUp" and e["parts"])
    assert len(first["parts"]) == 302 and "parts_from" not in first
    assert second["parts_from"] == written.index(first)
    assert second["parts"] == {
        "gm": "cccccccccc 5 ops",
        "example_inputs[1]": "dddddddddd shape=[8]",
    }
    assert second["parts_dropped"] == ["inductor_config[option_7]", "example_inputs[0]"]
    loaded = [e for e in load_session(folder).events if isinstance(e, ev.CacheLookedUp)]
    assert [e.parts for e in loaded] == [g0.parts, {}, g1.parts]


def test_a_key_unlike_the_one_before_is_written_whole() -> None:
    a = ev.to_dict(_lookup("0/0"))
    b = ev.to_dict(_lookup("1/0"))
    b["parts"] = {f"other[{i}]": "x" for i in range(5)}
    assert share([a, b]) == [a, b]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"parts_from": 5}, "event 2: parts_from 5 is not an earlier cache lookup"),
        ({"parts_from": 1}, "event 2: parts_from 1 is not an earlier cache lookup"),
        ({"parts_from": "0"}, "event 2: parts_from '0' is not an earlier cache lookup"),
        (
            {"parts_from": 0, "parts_dropped": "gm"},
            "event 2: parts against event 1 are not readable",
        ),
    ],
)
def test_a_reference_that_cannot_be_followed_is_one_line(
    tmp_path: Path, change: dict, said: str
) -> None:
    first, second = ev.to_dict(_lookup("0/0")), ev.to_dict(_lookup("1/0"))
    second.update(parts={}, **change)
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"schema": "dlcprof.report/2", "events": [first, second]}))
    with pytest.raises(ReportError) as e:
        load_session(p)
    assert str(e.value) == f"{p} is corrupted: {said}"


def test_a_report_of_schema_1_keeps_every_key_whole(tmp_path: Path) -> None:
    events = [ev.to_dict(_lookup("0/0")), ev.to_dict(_lookup("1/0"))]
    p = tmp_path / "old.json"
    p.write_text(json.dumps({"schema": "dlcprof.report/1", "events": events}))
    loaded = [e for e in load_session(p).events if isinstance(e, ev.CacheLookedUp)]
    assert [e.parts for e in loaded] == [SETTINGS, SETTINGS]
    expand(events)  # nothing to restore
    assert [e["parts"] for e in events] == [SETTINGS, SETTINGS]
