"""``python -m dlcprof.cli`` and the ``dlcprof`` script: ``main``, then exit."""

import gc
import sys

from dlcprof.cli import main


def run() -> None:
    code = main()
    # What is left is about to go: without freezing it, the collections of
    # Python's own teardown walk every object the session built (tens of ms,
    # added to an attached program's wall time).
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
