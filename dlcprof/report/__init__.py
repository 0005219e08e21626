"""Reports: the JSON report (schema "dlcprof.report/1"), HTML, Markdown,
Chrome trace and comparisons. Never imports torch or Textual."""

from dlcprof.report.errors import ReportError

__all__ = ["ReportError"]
