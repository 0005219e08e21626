"""The program's process tree (dlcprof/attach/tree.py), on real processes: a
child in a session of its own (as torchrun starts a rank) is found, outlives
its parent, and is ended; a pid is never signalled once its process is gone;
a child a thread started is found. Each both ways: from the kernel's lists of
children (dlcprof/proc_tree.py) and, where a kernel keeps none, by a scan of
/proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest
from helpers.proc import alive, wait_gone

from dlcprof import proc_tree
from dlcprof.attach.tree import Tree

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")

# A launcher that starts a child in a new session (torchrun's ranks), says its
# pid, and sleeps; killed, it leaves the child orphaned.
LAUNCHER = (
    "import subprocess, sys, time\n"
    "c = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
    "print(c.pid, flush=True)\n"
    "time.sleep(300)\n"
)


# A process whose child was started by a thread that still runs: the kernel
# lists the child under that thread, not under the main one.
THREADED = (
    "import subprocess, threading, time\n"
    "def spawn():\n"
    "    print(subprocess.Popen(['sleep', '300']).pid, flush=True)\n"
    "    time.sleep(300)\n"
    "threading.Thread(target=spawn, daemon=True).start()\n"
    "time.sleep(300)\n"
)


@pytest.fixture(params=["kernel lists", "scan"], autouse=True)
def listing(request, monkeypatch):
    """Both ways of finding the tree: the kernel's lists, a scan of /proc."""
    lists = request.param == "kernel lists"
    if lists and not proc_tree.SUPPORTED:
        pytest.skip("this kernel keeps no lists of children")
    monkeypatch.setattr(proc_tree, "SUPPORTED", lists)


def test_an_orphan_in_a_session_of_its_own_is_found_and_ended():
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdout=subprocess.PIPE, text=True)
    child = int(launcher.stdout.readline())
    tree = Tree(launcher.pid)
    tree.update()
    assert set(tree.running()) == {launcher.pid, child}
    launcher.kill()
    launcher.wait()
    assert tree.running() == [child]  # the orphan, reparented, still remembered
    assert tree.end(grace_s=5.0) == [child]
    assert not wait_gone([child], 5)
    assert tree.end(grace_s=0.1) == []


def test_a_reused_pid_is_not_the_process_remembered():
    proc = subprocess.Popen(["sleep", "300"])
    tree = Tree(proc.pid)
    tree.update()
    tree.seen[proc.pid] -= 1  # as if the kernel had given the pid to another process
    assert tree.running() == [] and tree.end(grace_s=0.1) == []
    time.sleep(0.1)
    assert alive([proc.pid]) == [proc.pid]
    proc.kill()
    proc.wait()


def test_a_child_a_thread_started_is_found_as_psutil_finds_it():
    proc = subprocess.Popen([sys.executable, "-c", THREADED], stdout=subprocess.PIPE, text=True)
    try:
        child = int(proc.stdout.readline())
        tree = Tree(proc.pid)
        tree.update()
        assert set(tree.running()) == {proc.pid, child}
        found = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        assert found == [child]
        if proc_tree.SUPPORTED:
            assert proc_tree.descendants(proc.pid) == found
    finally:
        tree.end(grace_s=1.0)
        proc.wait()
