"""Keep each compile's ``compilation_metrics`` record when Dynamo's settings hold
what JSON cannot write.

The record (a compile's seconds, op counts, failure: ``CompileFinished``) carries
a JSON copy of Dynamo's config, made by ``torch._dynamo.utils.
_get_dynamo_config_for_logging``. torch 2.11 does not leave
``ignore_logging_functions`` out of that copy (2.13 does), so once a function is
in it (the graph-break hatch ``dlcprof try`` sets, or a program that followed
that advice) the copy raises, torch logs "Unexpected exception logging
compilation metrics", and every later compile has no record. Wrapped here: a
config JSON cannot write is null in the record, which is kept.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from dlcprof.worker.probes.lazy import when_imported

UTILS = "torch._dynamo.utils"
CONFIG_FOR_LOGGING = "_get_dynamo_config_for_logging"
_WRAPPED = "__dlcprof_keeps_the_record__"


def install() -> None:
    """Once Dynamo's utils are imported (once per process: it outlives a fork)."""
    when_imported(UTILS, _wrap)


def _wrap(module: ModuleType) -> None:
    original = getattr(module, CONFIG_FOR_LOGGING, None)
    # A torch without it writes no config copy that could raise: nothing to keep.
    if not callable(original) or getattr(original, _WRAPPED, False):
        return

    @functools.wraps(original)
    def config_for_logging(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except TypeError:  # json.dumps of a function, or sorted() of a set of them
            return None

    setattr(config_for_logging, _WRAPPED, True)
    setattr(module, CONFIG_FOR_LOGGING, config_for_logging)
