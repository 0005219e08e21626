"""dlcprof's side of attaching to the user's own program: ``dlcprof [run] -- CMD ARGS…``.

``launch.py`` spawns the command with ``worker/attached/bootstrap`` on its
``PYTHONPATH`` (the program's side: ``dlcprof/worker/attached``) and forwards
stop signals to it, importing nothing else of dlcprof first (each millisecond
before the spawn is the program's); ``program.py`` accepts the stream each
compiling process opens and decodes events (data only: nothing received is
executed); ``tree.py``
remembers the program's process tree and ends what a stop left running. The
monitors on each compiling process are ``monitors/program.py``. What the two
sides agree on (environment names, the kernel sampling policy) is
``dlcprof/attach_contract.py``.
"""
