"""dlcprof's side of attaching to the user's own program: ``dlcprof [run] -- CMD ARGS…``.

``program.py`` spawns the command with ``worker/attached/bootstrap`` on its
``PYTHONPATH`` (the program's side: ``dlcprof/worker/attached``), accepts the
stream each compiling process opens, decodes events (data only: nothing
received is executed) and forwards stop signals to the program; ``tree.py``
remembers the program's process tree and ends what a stop left running. The
monitors on each compiling process are ``monitors/program.py``. What the two
sides agree on (environment names, the kernel sampling policy) is
``dlcprof/attach_contract.py``.
"""
