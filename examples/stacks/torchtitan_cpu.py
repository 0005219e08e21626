"""torchtitan's trainer on a machine without an accelerator, FSDP2 over gloo.

torchtitan picks its device once, at import (``tools/utils.py``: the available
accelerator, else "cuda"), and its memory monitor calls CUDA's memory API on
that device's module. This makes the answer "cpu" before torchtitan is
imported and hands it a stand-in for ``torch.cpu`` with those calls (no
figures: torchtitan's memory lines read 0 or -1); on the CPU device its
process group is gloo. Two more gaps, each closed where it opens: torchtitan
turns off FSDP's gradient division, so FSDP2 reduces with PREMUL_SUM(1.0),
which gloo lacks (asked for as the plain SUM it is), and 0.3.0 calls
``torch.distributed.set_timeout``, which torch 2.13 names ``_set_pg_timeout``.
Nothing else of torchtitan is changed. It needs ``triton`` importable even on
CPU (``pip install triton torch==<yours>``).

``tiny`` is torchtitan's ``llama3_debugmodel`` cut to 2 blocks, 64-token
sequences, batch 2, 4 steps, compile on (each block and the loss), reading the
files ``assets.py`` makes (``python examples/stacks/assets.py assets`` in the
folder the command runs in). Two settings differ from the debug model because
CPU cannot run them: SDPA instead of FlexAttention (no backward on CPU), and
the ``partial_dtensor`` backend (FSDP2's ``fully_shard`` on the data-parallel
mesh; the default ``spmd_types`` stops at ``fully_shard`` on torch 2.13).

    dlcprof run -- torchrun --nproc-per-node 2 examples/stacks/torchtitan_cpu.py \\
        --module torchtitan_cpu --config tiny
"""

import os
import types

import torch
import torch._utils
import torch.distributed.distributed_c10d as c10d

torch._utils._get_available_device_type = lambda: "cpu"
import torchtitan.tools.utils as titan_utils  # noqa: E402

titan_utils.device_module = types.SimpleNamespace(
    current_device=lambda: 0,  # an index, as CUDA's (torch.cpu says "cpu")
    device_count=torch.cpu.device_count,
    set_device=torch.cpu.set_device,
    synchronize=torch.cpu.synchronize,
    get_device_name=lambda device=None: "cpu",
    get_device_properties=lambda device=None: types.SimpleNamespace(
        name="cpu", total_memory=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    ),
    memory_stats=lambda device=None: {},
    reset_peak_memory_stats=lambda device=None: None,
    empty_cache=lambda: None,
)

import torchtitan.distributed.fsdp as titan_fsdp  # noqa: E402
from torch.distributed.fsdp import FSDPModule  # noqa: E402

_no_division = titan_fsdp.disable_fsdp_gradient_division


def _no_division_over_gloo(model: torch.nn.Module) -> None:
    _no_division(model)
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.set_force_sum_reduction_for_comms(True)


titan_fsdp.disable_fsdp_gradient_division = _no_division_over_gloo
if not hasattr(torch.distributed, "set_timeout"):
    torch.distributed.set_timeout = c10d._set_pg_timeout


def tiny():
    from torchtitan.models.common.attention import ScaledDotProductAttention
    from torchtitan.models.llama3.config_registry import llama3_debugmodel

    config = llama3_debugmodel()
    config.model_spec.model.layers = config.model_spec.model.layers[:2]
    for layer in config.model_spec.model.layers:
        layer.attention.inner_attention = ScaledDotProductAttention.Config()
    config.hf_assets_path = "assets/tokenizer"
    config.dataloader.dataset_path = "assets/c4_test"
    config.training.seq_len = 64
    config.training.local_batch_size = 2
    config.training.steps = 4
    config.compile.enable = True
    config.parallelism.spmd_backend = "partial_dtensor"
    config.dump_folder = "outputs/torchtitan"
    return config


if __name__ == "__main__":
    from torchtitan.train import main

    main()
