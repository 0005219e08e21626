"""``@data`` behaves as ``@dataclass``: equality, hashing, repr, and what a
class writes itself, each beside the same class made by ``dataclasses``."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import field
from typing import Any

import pytest

from dlcprof.data import data


def twins(frozen: bool = False) -> list[Any]:
    """The same classes made by ``@data`` and by ``@dataclass``."""
    made: list[Any] = []
    for decorate in (data(frozen=frozen), dataclasses.dataclass(frozen=frozen)):

        class Point:
            x: float
            y: list[int] = field(default_factory=list)
            hidden: int = field(default=0, compare=False, repr=False)

        class Sub(Point):
            z: int = 0

        point = decorate(Point)
        made.append((point, decorate(type("Sub", (point,), dict(vars(Sub))))))
    return made


@pytest.mark.parametrize("frozen", [False, True])
def test_as_dataclasses_makes_them(frozen):
    (point, sub), (std_point, std_sub) = twins(frozen)
    nan = math.nan
    args = [(1, [2], 3), (1, [2], 4), (1, [3], 3), (nan, [], 0), (float("nan"), [], 0)]
    for ours, theirs in ((point, std_point), (sub, std_sub)):
        for a in args:
            assert repr(ours(*a)).split("(", 1)[1] == repr(theirs(*a)).split("(", 1)[1]
            for b in args + [(nan, [], 0)]:
                assert (ours(*a) == ours(*b)) == (theirs(*a) == theirs(*b)), (a, b)
            assert ours(*a).__eq__(a) is NotImplemented
        if frozen:
            assert hash(ours(1, (), 2)) == hash(ours(1, (), 3))
            assert len({ours(1, (), 2), ours(1, (), 3), ours(2, ())}) == 2
            with pytest.raises(dataclasses.FrozenInstanceError):
                ours(1).x = 2
        else:
            assert ours.__hash__ is None and theirs.__hash__ is None
    assert point(1) != sub(1) and std_point(1) != std_sub(1)  # another class: not equal
    assert repr(sub(1, [], 0, 4)) == "Sub(x=1, y=[], z=4)"


def test_a_class_keeps_what_it_writes_itself():
    @data
    class Own:
        x: int

        def __repr__(self) -> str:
            return "mine"

        def __eq__(self, other: object) -> bool:
            return True

    assert repr(Own(1)) == "mine" and Own(1) == 3 and Own.__hash__ is None

    @data(frozen=True)
    class Hashed:
        x: int

        def __hash__(self) -> int:
            return 7

    assert hash(Hashed(1)) == 7


def test_one_field_compares_as_a_tuple_of_one():
    @data
    class One:
        x: float

    nan = math.nan
    assert One(nan) == One(nan)  # one object: equal, as the tuples (nan,) are
    assert One(nan) != One(float("nan"))


def test_every_dataclass_of_dlcprof_is_made_by_data():
    """A ``@dataclass`` left in the package compiles its methods at every start."""
    import ast
    from pathlib import Path

    import dlcprof

    package = Path(dlcprof.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for dec in node.decorator_list:
                name = ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)
                if name in ("dataclass", "dataclasses.dataclass"):
                    found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found == []
