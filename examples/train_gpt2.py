"""A plain GPT-2 training script, as a user writes one: not a dlcprof workload,
a program to run under `dlcprof -- python examples/train_gpt2.py`.

A small GPT-2 from Hugging Face transformers (random weights, no download),
compiled whole, AdamW, and batches whose sequence length changes part-way
(the recompile dlcprof shows live, with the guard that failed).

    dlcprof -- python examples/train_gpt2.py                 # the TUI, live
    dlcprof run -- python examples/train_gpt2.py --steps 20  # headless

Its own clock starts at its first line: it prints when its imports returned
and when each step ended, for dlcprof's boot to be read against.
"""

import time

T0 = time.perf_counter()

import argparse  # noqa: E402

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8, help="steps per sequence length")
    parser.add_argument("--seqs", default="64,96", help="sequence lengths, in turn")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    print(f"own clock: imports returned at {time.perf_counter() - T0:.2f} s", flush=True)
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=args.layers,
        n_embd=128,
        n_head=4,
        vocab_size=2048,
        n_positions=256,
        bos_token_id=0,
        eos_token_id=0,
        loss_type="ForCausalLM",
    )
    model = torch.compile(GPT2LMHeadModel(config))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for seq in (int(s) for s in args.seqs.split(",")):
        for step in range(args.steps):
            t0 = time.perf_counter()
            ids = torch.randint(0, config.vocab_size, (args.batch, seq))
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            end = time.perf_counter()
            print(
                f"seq {seq} step {step}: loss {loss.item():.3f} ({(end - t0) * 1e3:.0f} ms, "
                f"ends at {end - T0:.2f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
