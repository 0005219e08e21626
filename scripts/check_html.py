#!/usr/bin/env python3
"""Render the HTML reports, open them in headless Chromium, fail on console errors
or on content wider than its card.

    python scripts/check_html.py [--session PATH] [--compare A B] [--out DIR] [--height PX]

Without --session it renders the recorded fixtures in tests/fixtures (all
of them as one session, and the static/dynamic sweep pair on the compare page).
Writes report.html, compare.html and a PNG screenshot of each into --out
(default: a fresh temp dir) and exits non-zero when Chromium logs any console
message (the pages carry no script, so any message is a failure: a CSP
violation, a blocked network load, a parse error), cannot render, or has
something wider than its card at --width (1400 px by default).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlcprof import events as ev  # noqa: E402
from dlcprof.figures.compare import compare  # noqa: E402
from dlcprof.report.errors import ReportError  # noqa: E402
from dlcprof.report.html import render_compare_html, render_html  # noqa: E402
from dlcprof.report.load import load_session  # noqa: E402
from dlcprof.report.model import build  # noqa: E402
from dlcprof.session import Session  # noqa: E402

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]
# Lines that mean the page itself misbehaved (not Chromium's own chatter).
BAD_MARKERS = ("CONSOLE", "Uncaught", "Refused to", "Failed to load resource")


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _fixture_sessions() -> list[tuple[Path, Session]]:
    out = []
    for p in sorted((ROOT / "tests" / "fixtures").glob("*.jsonl")):
        lines = [ln for ln in p.read_text().splitlines() if ln.strip()]
        out.append((p, Session.from_events([ev.decode(ln) for ln in lines])))
    return out


def pick_sessions(args: argparse.Namespace) -> tuple[Session, tuple[Session, Session] | None]:
    if args.session:
        main = load_session(args.session)
    else:
        fixtures = _fixture_sessions()
        if not fixtures:
            raise SystemExit("no --session given and no tests/fixtures/*.jsonl to render")
        # Every recording in one session, as a TUI session with several runs.
        main = Session.from_events([e for _, s in fixtures for e in s.events])
    pair = None
    if args.compare:
        pair = (load_session(args.compare[0]), load_session(args.compare[1]))
    elif not args.session:
        by_dyn: dict[str, Session] = {}
        for _, s in _fixture_sessions():
            for r in s.runs.values():
                if r.sweep:
                    by_dyn.setdefault(str(r.settings.dynamic if r.settings else None), s)
        dyn = by_dyn.get("true") or by_dyn.get("auto")
        if "false" in by_dyn and dyn is not None:
            pair = (by_dyn["false"], dyn)
    return main, pair


def check_page(
    chromium: str, html_path: Path, png_path: Path, width: int, height: int
) -> list[str]:
    """Screenshot ``html_path``; the console problems Chromium logged."""
    with tempfile.TemporaryDirectory(prefix="dlcprof-chromium-") as profile:
        cmd = [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={png_path}",
            html_path.as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    problems = [ln for ln in proc.stderr.splitlines() if any(m in ln for m in BAD_MARKERS)]
    if proc.returncode != 0:
        problems.append(f"chromium exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    if not png_path.exists() or png_path.stat().st_size == 0:
        problems.append(f"no screenshot written to {png_path}")
    return problems


# Measures, once the page has laid out, what sticks out of its card to the right,
# and whether the page itself scrolls sideways. Run on a copy without the
# page's CSP (which forbids scripts); the report itself never carries one.
_PROBE = """<script>
addEventListener('load', () => {
  const out = [];
  for (const card of document.querySelectorAll('section.card')) {
    // The card's content box: a child over its padding already makes it scroll.
    const style = getComputedStyle(card);
    const edge = card.getBoundingClientRect().right - parseFloat(style.paddingRight)
                 - parseFloat(style.borderRightWidth);
    for (const el of card.querySelectorAll(':scope > *')) {
      const over = el.getBoundingClientRect().right - edge;
      const h = card.querySelector('h2');
      if (over > 0.5) out.push(`${h ? h.textContent : 'a card'}: ${el.tagName.toLowerCase()}`
                               + `.${el.className} ${Math.round(over)} px past its card`);
    }
  }
  const doc = document.documentElement.scrollWidth;
  if (doc > innerWidth) out.push(`the page is ${doc - innerWidth} px wider than the window`);
  const pre = document.createElement('pre');
  pre.id = 'overflow-probe';
  pre.textContent = out.join('\\n');
  document.body.appendChild(pre);
});
</script>"""


def overflowing(chromium: str, html: str, width: int) -> list[str]:
    """What sticks out of its card (or widens the page) at ``width`` pixels."""
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    html = html.replace("</body>", _PROBE + "</body>")
    with tempfile.TemporaryDirectory(prefix="dlcprof-chromium-") as tmp:
        page = Path(tmp) / "probe.html"
        page.write_text(html, encoding="utf-8")
        cmd = [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp}/profile",
            f"--window-size={width},1200",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ]
        dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    m = re.search(r'<pre id="overflow-probe">(.*?)</pre>', dom, re.S)
    if m is None:
        return ["the overflow probe did not run"]
    return [line for line in m.group(1).splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--session", help="a report (session.json, folder or .jsonl) to render")
    ap.add_argument(
        "--compare", nargs=2, metavar=("A", "B"), help="two reports for the compare page"
    )
    ap.add_argument("--out", help="where to write the pages and screenshots")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2400)
    args = ap.parse_args(argv)

    chromium = find_chromium()
    if chromium is None:
        print("chromium not found (apt-get install -y chromium fonts-firacode)", file=sys.stderr)
        return 2
    try:
        main_session, pair = pick_sessions(args)
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="dlcprof-html-"))
    out.mkdir(parents=True, exist_ok=True)
    pages = {"report": render_html(build(main_session))}
    if pair is not None:
        pages["compare"] = render_compare_html(compare(*pair))
    failed = False
    for name, html in pages.items():
        html_path = out / f"{name}.html"
        html_path.write_text(html, encoding="utf-8")
        png = out / f"{name}.png"
        problems = check_page(chromium, html_path, png, args.width, args.height)
        problems += overflowing(chromium, html, args.width)
        status = "FAIL" if problems else "ok"
        print(f"{status} {html_path} -> {png}")
        for p in problems:
            print(f"  {p}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("LANG", "C.UTF-8")
    sys.exit(main())
