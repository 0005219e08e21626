"""One pane a file; each renders from a ``View`` of the Session."""
