"""Programs that misbehave, for tests/e2e/test_attach.py (one mode per run).
Compiles use the eager backend: Dynamo's events without Inductor's cost."""

import os
import signal
import subprocess
import sys
import time

import torch


def compile_once(name="f", calls=1):
    fn = torch.compile(lambda x: torch.sin(x) + 1, backend="eager")
    for _ in range(calls):
        fn(torch.randn(4))


def signals():
    pending = []  # a signal during the compile: torch code may swallow a SystemExit

    def said(signum, frame):
        print(f"{signal.Signals(signum).name} in the program", flush=True)
        if compiling:
            pending.append(signum)
        else:
            sys.exit(128 + signum)

    compiling = True
    signal.signal(signal.SIGTERM, said)
    signal.signal(signal.SIGHUP, said)
    compile_once()
    compiling = False
    if pending:
        sys.exit(128 + pending[0])
    try:  # before "ready": the signal may come while print returns
        print(f"ready {os.getpid()}", flush=True)
        time.sleep(120)
    except KeyboardInterrupt:
        print("KeyboardInterrupt in the program", flush=True)
        sys.exit(130)


def terminal():
    compile_once()
    try:
        print("got", input("name? "), flush=True)
        time.sleep(120)
    except KeyboardInterrupt:
        print("KeyboardInterrupt in the program", flush=True)
        sys.exit(130)


def survive(flag):
    compile_once()
    print(f"ready {os.getpid()}", flush=True)
    while not os.path.exists(flag):
        time.sleep(0.05)
    compile_once("g")  # dlcprof is gone: the probe goes quiet
    for i in range(1000):
        print(f"after {i}")
    print("finished", flush=True)


def children(lines):
    pids = []
    for compiles in (False, True):
        pid = os.fork()
        if pid == 0:  # DataLoader-style worker
            torch.randn(8).sum()
            if compiles:
                compile_once()
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    code = "import sys; print('plain python, torch imported:', 'torch' in sys.modules)"
    plain = subprocess.run([sys.executable, "-c", code], check=True)
    compile_once()
    for i in range(lines):
        print(f"line {i}")
    print("end", flush=True)
    return plain.returncode


def exit_in_compile():
    def backend(gm, example_inputs):
        print("exiting inside a compile", flush=True)
        os._exit(7)

    torch.compile(lambda x: x * 2, backend=backend)(torch.randn(4))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "signals":
        signals()
    elif mode == "survive":
        survive(sys.argv[2])
    elif mode == "children":
        sys.exit(children(int(sys.argv[2])))
    elif mode == "exit-in-compile":
        exit_in_compile()
    elif mode == "terminal":
        terminal()
    elif mode == "raise":  # an uncaught exception after a compile
        compile_once()
        raise RuntimeError("boom after a compile")
    elif mode == "raise-past-the-hook":  # dlcprof's excepthook never runs (replaced
        # here; a second signal can interrupt it as it starts)
        compile_once()
        sys.excepthook = sys.__excepthook__
        raise RuntimeError("boom after a compile")
    elif mode == "compile":
        compile_once(calls=int(sys.argv[2]) if len(sys.argv) > 2 else 1)
        print("compiled", flush=True)
