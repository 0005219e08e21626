"""``python -m dlcprof.cli``: what the ``dlcprof`` script runs."""

import sys

from dlcprof.cli import main

sys.exit(main())
