"""``python -m dlcprof.worker --events-fd N``: see dlcprof/worker/__init__.py."""

from __future__ import annotations

import argparse
import sys

from dlcprof.worker.emit import Emitter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlcprof.worker")
    parser.add_argument(
        "--events-fd", type=int, required=True, help="write events (JSON lines) to this fd"
    )
    args = parser.parse_args(argv)
    emitter = Emitter(args.events_fd)
    try:
        from dlcprof.worker.run import serve

        return serve(emitter)
    finally:
        emitter.close()


if __name__ == "__main__":
    sys.exit(main())
