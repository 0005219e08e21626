"""Reports: the JSON report (schema "dlcprof.report/2"), HTML, Markdown,
Chrome trace and the comparison page. Never imports torch, Textual, Rich or
the monitors.

A session is built once into one model (``build_model``, from
``dlcprof.report.model``: figures from ``dlcprof.figures``) and the renderers
take that model: JSON (``schema``, the one home of every JSON field's shape;
``load`` reads it back),
HTML (Jinja2 templates with auto-escaping, ``html``), Markdown (``markdown``)
and the Chrome trace (``trace``), so they state the same numbers in the same
words.

The names below are the public API. A comparison of two runs is a figure
(``dlcprof.figures.compare``), placed by ``dlcprof.tables.compare_table`` in
the terminal and by ``dlcprof.report.html.render_compare_html`` as a page.
"""

from __future__ import annotations

from dlcprof.report.atomic import write_atomic
from dlcprof.report.errors import ReportError
from dlcprof.report.folder import default_report_dir, save_session
from dlcprof.report.html import render_html
from dlcprof.report.load import load_session
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import REPORT_SCHEMA, build_report, dumps_report
from dlcprof.report.trace import render_chrome_trace

__all__ = [
    "REPORT_SCHEMA",
    "ReportError",
    "build_model",
    "build_report",
    "default_report_dir",
    "dumps_report",
    "load_session",
    "render_chrome_trace",
    "render_html",
    "render_markdown",
    "save_session",
    "write_atomic",
]
