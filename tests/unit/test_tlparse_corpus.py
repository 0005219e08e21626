"""tlparse's own test inputs (tests/fixtures/tlparse, from meta-pytorch/tlparse's
tests/inputs under its BSD-3 licence, LICENSE beside them): each imports with
exit 0, and the figures both tools give agree with tlparse run on the same
log: the compile ids it lists and the records whose payload fails its md5.
Where they differ on purpose is docs/import.md's "tlparse's inputs"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import FIXTURES

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.trace_import.job import import_trace
from dlcprof.trace_records.log_file import BAD_MD5, CUT, Damage, read_records

TLPARSE = Path(sys.executable).parent / "tlparse"
INPUTS = FIXTURES / "tlparse"
LOGS = sorted(p for p in INPUTS.iterdir() if p.suffix in (".log", ".txt"))
FOLDERS = sorted(p for p in INPUTS.iterdir() if p.is_dir())
# AOTInductor logs: one compilation_metrics record with no compile id, which
# tlparse leaves out of its compile directory and dlcprof shows as compile "?".
AOT = re.compile(r"inductor_provenance_(aot_|extended)")


def _tlparse(log: Path, out: Path) -> tuple[set[str], int]:
    """The compile ids tlparse lists ("[0/1_1]" is a later attempt of 0/1) and
    its count of payloads failing their md5."""
    done = subprocess.run(
        [str(TLPARSE), str(log), "-o", str(out), "--overwrite", "--no-browser"],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = json.loads((out / "compile_directory.json").read_text())
    m = re.search(r"fail_payload_md5: (\d+)", done.stdout + done.stderr)
    return {k.strip("[]") for k in listed if "_" not in k and k != "[-/-]"}, int(m[1]) if m else 0


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_each_log_imports_as_tlparse_reads_it(tmp_path, log):
    assert main(["import", str(log), "-o", str(tmp_path / "out")]) == 0
    ids, bad_md5 = _tlparse(log, tmp_path / "tl")
    damage = Damage()
    for _ in read_records(str(log), damage):
        pass
    assert damage.counts.get(BAD_MD5, 0) + damage.counts.get(CUT, 0) == bad_md5
    (run,) = import_trace([str(log)], workers=1).runs.values()
    mine = {c for c in run.compiles if not c.endswith(ev.BACKWARD)}
    assert mine == ({"?"} if AOT.match(log.name) else ids)
    assert not AOT.match(log.name) or ids == set()


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_each_folder_imports_with_exit_0(tmp_path, capsys, folder):
    assert main(["import", str(folder), "-o", str(tmp_path / "out")]) == 0
    assert "imported into" in capsys.readouterr().out
