"""write_atomic: the old file or the new one, never half, never a stray temp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dlcprof.report import atomic
from dlcprof.report.atomic import write_atomic
from dlcprof.report.errors import ReportError


def test_writes_str_and_bytes(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    write_atomic(p, "héllo")
    assert p.read_text(encoding="utf-8") == "héllo"
    write_atomic(p, b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    assert os.listdir(tmp_path) == ["a.txt"]
    # Usual permissions, not mkstemp's 0600.
    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask


def test_failed_replace_keeps_old_file(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "report.json"
    p.write_text("old contents")

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(ReportError) as e:
        write_atomic(p, "new contents" * 1000)
    assert str(e.value) == f"cannot write {p}: disk full"
    assert p.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["report.json"]  # no temp file left


def test_failure_mid_write_keeps_old_file(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "report.json"
    p.write_text("old contents")

    def fsync_fails(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic.os, "fsync", fsync_fails)
    with pytest.raises(ReportError) as e:
        write_atomic(p, "new")
    assert "\n" not in str(e.value) and str(e.value).startswith(f"cannot write {p}: ")
    assert p.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["report.json"]


def test_interrupt_mid_write_cleans_up(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "report.json"
    p.write_text("old")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(p, "new")
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.json"]


def test_unwritable_directory(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        if os.access(d, os.W_OK):  # root ignores permissions: use a missing dir instead
            target = tmp_path / "missing" / "report.json"
        else:
            target = d / "report.json"
        with pytest.raises(ReportError) as e:
            write_atomic(target, "x")
        msg = str(e.value)
        assert msg.startswith(f"cannot write {target}: ") and "\n" not in msg
    finally:
        d.chmod(0o700)


def test_parent_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ReportError) as e:
        write_atomic(f / "report.json", "x")
    assert "not a directory" in str(e.value)
