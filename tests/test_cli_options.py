"""Every bad option or target is one line on stderr and exit code 2."""

from __future__ import annotations

import pytest

from dlcprof.cli import main


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["run", "pointwise-chain", "--mode", "fast"],
            "invalid --mode 'fast': choose one of default",
        ),
        (["run", "pointwise-chain", "--dynamic", "maybe"], "invalid --dynamic 'maybe'"),
        (["run", "pointwise-chain", "--backend", "tvm"], "invalid --backend 'tvm'"),
        (["run", "pointwise-chain", "--device", "tpu"], "invalid --device 'tpu'"),
        (["run", "pointwise-chain", "--dtype", "int8"], "invalid --dtype 'int8'"),
        (["run", "pointwise-chain", "--size", "huge"], "invalid --size 'huge'"),
        (["run", "pointwise-chain", "--cache", "hot"], "invalid --cache 'hot'"),
        (["run", "pointwise-chain", "--threads", "0"], "invalid --threads 0"),
        (["run", "pointwise-chain", "--threads", "two"], "invalid --threads 'two'"),
        (["run", "pointwise-chain", "--iters", "-3"], "invalid --iters -3"),
        (["run", "pointwise-chain", "--shapes", "16,x"], "invalid --shapes '16,x'"),
        (["run", "pointwise-chain", "--shapes", "0,4"], "invalid --shapes '0,4'"),
        (["run", "pointwise-chain", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["run"], "the following arguments are required: target"),
        (["run", "no-such-workload"], "unknown workload 'no-such-workload'"),
        (["run", "/nonexistent/model.py"], "/nonexistent/model.py"),
        (["report", "/nonexistent/session.json"], "/nonexistent/session.json"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("dlcprof: error: ")
    assert needle in lines[0]
    assert captured.out == ""


def test_missing_function_in_user_file(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text("def build(device, dtype):\n    return print, ()\n")
    assert main(["run", f"{model}:buld"]) == 2
    err = capsys.readouterr().err.strip()
    assert "buld" in err and "build" in err and len(err.splitlines()) == 1


def test_list_shows_every_bundled_workload(capsys):
    from dlcprof.workloads import list_bundled

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for info in list_bundled():
        assert info.name in out
        assert info.description[:30] in out
