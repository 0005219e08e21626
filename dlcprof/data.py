"""``@data``: dlcprof's dataclasses, made without compiling source for each.

``dataclasses`` writes a class's ``__repr__``, ``__eq__`` and ``__hash__`` as
source and compiles each: a sixth of a dlcprof process's start (~190
classes). Here they are closures over the class's field names, as
``dataclasses`` would write them (the same class, then the fields' tuples
compared or hashed; ``compare`` honoured); ``__init__`` and a frozen class's
``__setattr__`` are still ``dataclasses``'.

Pure standard library, Python 3.10 too: an attached program imports the events.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import Any

if typing.TYPE_CHECKING:  # a dataclass to checkers (typing.dataclass_transform is 3.11+)
    from dataclasses import dataclass as data
else:

    def data(cls: type | None = None, /, *, frozen: bool = False, kw_only: bool = False) -> Any:
        """``@data``, ``@data(frozen=True)``, ``@data(kw_only=True)``: as ``@dataclass``."""

        def made(cls: type) -> type:
            own = cls.__dict__
            # As dataclasses: a __hash__ of the class's own is kept, not the None
            # that Python puts beside an __eq__ of its own.
            own_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
            cls = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen, kw_only=kw_only)
            fields = dataclasses.fields(cls)
            if "__repr__" not in own:
                cls.__repr__ = _repr(tuple(f.name for f in fields if f.repr))
            key = _key(tuple(f.name for f in fields if f.compare))
            if "__eq__" not in own:
                cls.__eq__ = _eq(key)
            if not own_hash:  # frozen: hashed by its fields; mutable: unhashable
                cls.__hash__ = _hash(key) if frozen else None
            return cls

        return made if cls is None else made(cls)


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields' values as one tuple (``attrgetter`` gives a bare value for one name)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names) if names else lambda obj: ()


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return key(self) == key(other)

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__
