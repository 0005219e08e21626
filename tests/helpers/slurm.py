"""A Slurm cluster of its own for a test: one slurmctld and one slurmd per
node, all on this machine (each node its own name and port), no accounting,
no munge; ``missing()`` says why none can be made (Slurm not installed:
``apt-get install slurm-wlm``)."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd", "srun", "sinfo")


def missing() -> str | None:
    """Why no cluster can be made here, or None."""
    absent = [d for d in DAEMONS if shutil.which(d) is None]
    return (
        f"Slurm is not installed ({', '.join(absent)}: apt-get install slurm-wlm)"
        if absent
        else None
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def local_cluster(folder: Path, nodes: int) -> Iterator[dict[str, str]]:
    """The cluster up, nodes ``node0`` .. ``node{nodes-1}`` idle; yields the
    environment its commands read (``SLURM_CONF``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "state").mkdir(exist_ok=True)
    # slurmstepd's sockets live in the spool: a Unix socket's path has 107 bytes
    # at most, which a test's tmp_path under pytest-xdist can pass.
    spool = Path(tempfile.mkdtemp(prefix="slurm-", dir="/tmp"))
    user = getpass.getuser()
    lines = [
        "ClusterName=dlcprof",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={_free_port()}",
        f"SlurmUser={user}",
        f"SlurmdUser={user}",
        "AuthType=auth/none",
        "CredType=cred/none",
        f"StateSaveLocation={folder / 'state'}",
        f"SlurmdSpoolDir={spool / '%n'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
        f"SlurmdPidFile={folder / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={folder / 'slurmctld.log'}",
        f"SlurmdLogFile={folder / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/pgid",
        "TaskPlugin=task/none",
        "SchedulerType=sched/builtin",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "ReturnToService=2",
        "MpiDefault=none",
        "JobCompType=jobcomp/none",
        "AccountingStorageType=accounting_storage/none",
        *(
            f"NodeName=node{k} NodeHostname=localhost NodeAddr=127.0.0.1 "
            f"Port={_free_port()} CPUs=1 State=UNKNOWN"
            for k in range(nodes)
        ),
        f"PartitionName=test Nodes=node[0-{nodes - 1}] Default=YES MaxTime=INFINITE State=UP",
    ]
    conf = folder / "slurm.conf"
    conf.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    daemons = [
        subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for argv in [
            ["slurmctld", "-D", "-i"],
            *(["slurmd", "-D", "-N", f"node{k}"] for k in range(nodes)),
        ]
    ]
    try:
        deadline = time.monotonic() + 60
        while True:
            done = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%T"], env=env, capture_output=True, text=True
            )
            if done.returncode == 0 and done.stdout.split() == ["idle"] * nodes:
                break
            if time.monotonic() > deadline:
                log = (folder / "slurmctld.log").read_text()[-2000:]
                raise RuntimeError(f"the test's Slurm nodes never came up: {done.stdout}{log}")
            time.sleep(0.2)
        yield env
    finally:
        for d in daemons:
            d.terminate()
        for d in daemons:
            try:
                d.wait(timeout=30)
            except subprocess.TimeoutExpired:
                d.kill()
                d.wait()
        shutil.rmtree(spool, ignore_errors=True)
