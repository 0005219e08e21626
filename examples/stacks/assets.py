"""The local files the stacks' examples read instead of a hub: a word-level
tokenizer (``tokenizer.json`` and ``tokenizer_config.json``, as litgpt and
torchtitan load them) and a few hundred lines of text, as ``.txt`` files
(litgpt's TextFiles) and as a JSON-lines ``c4_test`` (torchtitan).

    python examples/stacks/assets.py DIR
"""

import json
import random
import sys
from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers

SPECIALS = ["<unk>", "<pad>", "<s>", "</s>"]
WORDS = (
    "the a model learns to compile graphs and kernels fast slow on cpu with torch "
    "inductor dynamo guard break trace cache rank shard step loss grad"
).split()


def tokenizer(folder: Path) -> None:
    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "add_bos_token": True,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config))


def lines(n: int) -> list[str]:
    rng = random.Random(0)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) for _ in range(n)]


def main(root: Path) -> None:
    tokenizer(root / "tokenizer")
    for split, n in (("train", 4), ("val", 1)):
        folder = root / "text" / split
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (folder / f"{i}.txt").write_text("\n".join(lines(200)))
    c4 = root / "c4_test"
    c4.mkdir(parents=True, exist_ok=True)
    # Not "c4_test.json": datasets reads a "test" in a file's name as the split.
    (c4 / "data.json").write_text("\n".join(json.dumps({"text": t}) for t in lines(400)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
