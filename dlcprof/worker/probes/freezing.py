"""Inductor freezing (``torch._inductor.config.freezing``): under no_grad,
parameters become constants that Inductor folds and pre-packs. On the CPU this
is what lets max-autotune tune matmuls (docs/torch-notes.md §4)."""

from __future__ import annotations

from dlcprof.worker.probes import ProbeNotes


def enable(notes: ProbeNotes) -> bool:
    try:
        import torch._inductor.config as config

        if not hasattr(config, "freezing"):
            raise AttributeError("freezing")
        config.freezing = True
        return True
    except Exception as e:  # noqa: BLE001
        notes.unavailable(
            "freezing",
            f"torch._inductor.config.freezing not settable ({type(e).__name__}): "
            "the run compiles without freezing",
        )
        return False
