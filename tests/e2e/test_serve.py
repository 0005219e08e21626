"""``dlcprof serve``: the TUI in a browser page, for real. The server starts
as a user would start it; headless Chromium loads the page (the served HTML
names the app's websocket); the keys go through that websocket as the page's
JavaScript sends them (textual-serve's protocol: ["stdin", ...]), since no
browser-automation client is installed here; r compiles a tiny workload and
the status bar says the run is complete; Ctrl-C leaves nothing running."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import psutil
import pytest
from helpers.proc import dlcprof_argv

pytest.importorskip("textual_serve", reason="the serve extra: pip install -e '.[serve]'")
aiohttp = pytest.importorskip("aiohttp", reason="comes with textual-serve")

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError("dlcprof serve did not listen")


async def _press_r_until_complete(url: str, timeout: float = 150.0) -> str:
    """The page's part: open the app's websocket, size it, press r, read the
    screen until the run is complete; what the screen said, as plain text."""
    seen = ""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url) as ws:
            await ws.send_str(json.dumps(["resize", {"width": 160, "height": 48}]))
            deadline = time.monotonic() + timeout
            pressed = False
            while time.monotonic() < deadline:
                try:
                    msg = await ws.receive(timeout=2.0)
                except TimeoutError:
                    msg = None
                if msg is not None and msg.type in (
                    aiohttp.WSMsgType.BINARY,
                    aiohttp.WSMsgType.TEXT,
                ):
                    data = msg.data if isinstance(msg.data, bytes) else msg.data.encode()
                    seen += _ANSI.sub("", data.decode("utf-8", "replace"))
                    seen = seen[-200_000:]
                elif msg is not None and msg.type in (
                    aiohttp.WSMsgType.CLOSED,
                    aiohttp.WSMsgType.ERROR,
                ):
                    break
                if not pressed and "Settings" in seen:  # the app is up: keys answer
                    await asyncio.sleep(2.0)
                    await ws.send_str(json.dumps(["stdin", "r"]))
                    pressed = True
                if "run complete" in seen:
                    return seen
    raise AssertionError(f"no completed run in the page (r pressed: {pressed}): {seen[-3000:]!r}")


def test_serve_runs_the_tui_in_a_page_and_stops_on_ctrl_c(tmp_path) -> None:
    port = _free_port()
    env = {**os.environ, "DLCPROF_DETERMINISTIC": "1"}
    argv = dlcprof_argv("serve", "--port", str(port), "pointwise-chain", "--size", "small")
    server = subprocess.Popen(
        argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        _wait_listening(port)
        page_url = f"http://127.0.0.1:{port}/"
        if BROWSER is not None:
            dom = subprocess.run(
                [
                    BROWSER,
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--dump-dom",
                    page_url,
                ],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        else:
            with urllib_open(page_url) as r:
                dom = r.read().decode()
        m = re.search(r'data-session-websocket-url="([^"]+)"', dom)
        assert m is not None and "textual-terminal" in dom, dom[:500]
        ws_url = m.group(1).replace("&amp;", "&")
        assert ws_url.startswith(f"ws://127.0.0.1:{port}/")
        screen = asyncio.run(_press_r_until_complete(ws_url))
        assert "run complete" in screen
        children = psutil.Process(server.pid).children(recursive=True)
        assert children  # the page's dlcprof, until the server stops
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C
        out, _ = server.communicate(timeout=30)
    assert server.returncode == 0, out
    alive = [p for p in children if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [], alive
    assert f"http://127.0.0.1:{port}" in out


def urllib_open(url: str):
    """Without a browser: the page as any HTTP client gets it."""
    import urllib.request

    return urllib.request.urlopen(url, timeout=30)


async def _open_then_close(url: str, after_s: float) -> None:
    """A page that closes about ``after_s`` after its dlcprof started."""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url) as ws:
            await ws.send_str(json.dumps(["resize", {"width": 160, "height": 48}]))
            deadline = time.monotonic() + after_s
            while time.monotonic() < deadline:
                try:
                    await ws.receive(timeout=0.05)
                except TimeoutError:
                    pass


def test_a_page_closed_after_a_second_leaves_no_process(tmp_path) -> None:
    """Issue 40, 7: a page closed within about a second left its dlcprof
    redrawing. Polled for the event (every process of the page gone), bounded."""
    port = _free_port()
    argv = dlcprof_argv("serve", "--port", str(port), "pointwise-chain", "--size", "small")
    server = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen: set[psutil.Process] = set()
    try:
        _wait_listening(port)
        url = f"ws://127.0.0.1:{port}/ws?width=160&height=48"
        asyncio.run(_open_then_close(url, 1.0))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            alive = [
                p
                for p in psutil.Process(server.pid).children(recursive=True)
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE
            ]
            seen.update(alive)
            if not alive:
                break
            time.sleep(0.2)
        assert alive == [], alive
    finally:
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=30)
    assert server.returncode == 0, out
    assert not [p for p in seen if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def _held_page_up(
    server: subprocess.Popen, port: int
) -> tuple[threading.Thread, list[psutil.Process]]:
    """A page held open (10 s) until its dlcprof is up and drawing: its standby
    worker (a second python) has started. The page's thread and processes."""
    url = f"ws://127.0.0.1:{port}/ws?width=160&height=48"
    held = threading.Thread(target=asyncio.run, args=(_open_then_close(url, 10.0),))
    held.start()
    page: list[psutil.Process] = []
    deadline = time.monotonic() + 60
    while len([p for p in page if p.name().startswith("python")]) < 2:
        assert time.monotonic() < deadline, "the page's dlcprof never started"
        time.sleep(0.2)
        page = psutil.Process(server.pid).children(recursive=True)
    return held, page


def _gone(processes: list[psutil.Process], timeout: float = 60.0) -> list[psutil.Process]:
    """Those of ``processes`` still running once all have ended or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def test_a_page_whose_server_was_killed_leaves_no_process(tmp_path) -> None:
    """A server gone without stopping its pages (SIGKILL, a crash): each page's
    dlcprof sees its input hang up and stops, its standby worker with it."""
    port = _free_port()
    argv = dlcprof_argv("serve", "--port", str(port), "pointwise-chain", "--size", "small")
    server = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_listening(port)
        held, page = _held_page_up(server, port)
    finally:
        server.kill()
        server.wait()
    held.join(timeout=30)
    assert _gone(page) == []


def test_ctrl_c_with_a_page_drawing_leaves_no_process(tmp_path) -> None:
    """Issue 40, 7: Ctrl-C (SIGINT to the server's process group, as a terminal
    sends it) while a page's dlcprof is up, its standby worker started: the
    server exits 0 and no process of the page is left (docs/cli.md)."""
    port = _free_port()
    argv = dlcprof_argv("serve", "--port", str(port), "pointwise-chain", "--size", "small")
    server = subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_listening(port)
        held, page = _held_page_up(server, port)
    finally:
        os.killpg(server.pid, signal.SIGINT)
        out, _ = server.communicate(timeout=60)
    held.join(timeout=30)
    assert server.returncode == 0, out
    assert _gone(page) == []


def test_sigterm_stops_a_drawing_page(tmp_path) -> None:
    """Issue 40, 7 ("ignores SIGTERM"): SIGTERM to a page's dlcprof while it
    draws ends it, its standby worker with it; the server keeps serving."""
    port = _free_port()
    argv = dlcprof_argv("serve", "--port", str(port), "pointwise-chain", "--size", "small")
    server = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_listening(port)
        held, page = _held_page_up(server, port)
        pythons = [p for p in page if p.name().startswith("python")]
        tui = next(p for p in pythons if p.ppid() not in {q.pid for q in pythons})
        tui.terminate()
        assert _gone(page) == []
        assert server.poll() is None
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    held.join(timeout=30)
