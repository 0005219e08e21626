"""A CI gate as a figure of a session, or of a session and its baseline: what
``dlcprof check -- CMD`` and the pytest plugin judge, in one place, torch-free.

- ``findings``: what a run compiled, broke and recompiled, each at the user's
  file:line with Dynamo's reason or guard and torch's hint, and its compile
  time in the steadiest measure the run has (CPU seconds, else wall);
- ``budgets``: the budgets and each run judged against them;
- ``baseline``: each run against its own run in a baseline session: what is
  new, and a compile-time regression beyond noise;
- ``unjudged``: what could not be judged (no process seen, no compile record,
  a probe unavailable, a compile that raised), each a violation, never a pass;
- ``places``: each violation at the user's line, relative to the repository;
  findings only inside packages said once;
- ``verdict``: every run's violations, and the verdict in words (``said``),
  the one shape the terminal, the pytest plugin, GitHub and JUnit place.
"""
