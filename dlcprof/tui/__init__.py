"""The Textual UI. Never imports torch: compiles run in a worker process."""
