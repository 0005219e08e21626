"""Every bad option, target or report is one line on stderr and exit code 2,
said before any worker starts where the source shows it."""

from __future__ import annotations

import re

import pytest
from helpers.paths import REPO

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
        (
            ["run", "pointwise-chain", "--threads", "two"],
            "argument --threads: 'two' is not a whole number (see",
        ),
        (["run", "pointwise-chain", "--iters", "abc"], "argument --iters: 'abc' is not a whole"),
        (["run", "pointwise-chain", "--iters", "-3"], "invalid --iters -3"),
        (["run", "pointwise-chain", "--shapes", "16,x"], "invalid --shapes '16,x'"),
        (["run", "pointwise-chain", "--shapes", "0,4"], "invalid --shapes '0,4'"),
        (
            ["run", "pointwise-chain", "--frobnicate"],
            "unrecognized arguments: --frobnicate (see 'dlcprof run --help')",
        ),
        (["--frobnicate"], "unrecognized arguments: --frobnicate (see 'dlcprof tui --help')"),
        (["compare", "a.json"], "required: SESSION_B (see 'dlcprof compare --help')"),
        (
            ["check", "--max-graph-breaks", "0", "--"],
            "no command after '--' (dlcprof check [budgets] -- python train.py)",
        ),
        (["run", "--"], "no command after '--' (dlcprof run [options] -- python train.py)"),
        (["run"], "the following arguments are required: target (see 'dlcprof run --help')"),
        (["run", "no-such-workload"], "unknown workload 'no-such-workload'"),
        (["run", "pointwise-chian"], "did you mean pointwise-chain or pointwise-epilogue?"),
        (["run", "gelu_mpl"], "did you mean gelu-mlp?"),
        (["run", "pointwise-chain", "--shapes", "-4"], "invalid --shapes '-4'"),
        (["run", "pointwise-chain", "--timeout", "soon"], "invalid float value: 'soon'"),
        (["run", "tiny-ops", "--sweep"], "workload tiny-ops has no inputs_for(size, device"),
        (["run", "graph-breaks", "--shapes", "8,16"], "has no inputs_for(size, device, dtype)"),
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


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dlcprof: error: "), captured.err
    assert captured.out == ""
    return lines[0]


FILES = {
    "syntax.py": ("def build(device, dtype):\n    return (\n", "has a syntax error: "),
    "nobuild.py": ("def helper():\n    pass\n", "defines no build(device, dtype) function"),
    "noargs.py": ("def build():\n    return print, ()\n", "build() in "),
    "threeargs.py": ("def build(model, device, dtype):\n    pass\n", "is not a build function"),
    "sizes.py": ("SIZES = [8, 0]\ndef build(device, dtype):\n    pass\n", "SIZES in "),
    "nullbyte.py": ("def build(device, dtype):\n    pass\n\0", "cannot contain null bytes"),
}


def test_a_script_is_not_a_workload_and_the_error_says_what_to_do(tmp_path, capsys) -> None:
    train = tmp_path / "train.py"
    train.write_text("import torch\n\nfor epoch in range(3):\n    print(epoch)\n")
    assert main(["run", str(train)]) == 2
    line = _one_error_line(capsys)
    assert "a script is not a workload" in line
    # The training-step pattern, documented where the message says, or the script as is.
    doc = re.search(r"docs/[\w-]+\.md", line)
    assert doc and (REPO / doc.group()).is_file()
    assert "optimizer" in (REPO / doc.group()).read_text()
    assert f"dlcprof -- python {train}" in line


@pytest.mark.parametrize("name", sorted(FILES))
def test_bad_workload_file_is_one_line_before_any_worker(name, tmp_path, capsys) -> None:
    source, needle = FILES[name]
    (tmp_path / name).write_text(source)
    assert main(["run", str(tmp_path / name)]) == 2
    line = _one_error_line(capsys)
    assert needle in line and name in line


def test_sweep_needs_what_the_file_lacks(tmp_path, capsys) -> None:
    f = tmp_path / "m.py"
    f.write_text(
        "def build(device, dtype):\n    pass\n\ndef inputs_for(n, device, dtype):\n    pass\n"
    )
    assert main(["run", str(f), "--sweep"]) == 2
    assert "declares no SIZES: give the sizes with --shapes" in _one_error_line(capsys)
    g = tmp_path / "g.py"
    g.write_text("def build(device, dtype):\n    pass\n")
    assert main(["run", str(g), "--shapes", "4,8"]) == 2
    assert "has no inputs_for(size, device, dtype): cannot sweep" in _one_error_line(capsys)
    h = tmp_path / "h.py"
    h.write_text(
        "SIZES = [1, 2]\n\ndef build(device, dtype):\n    pass\n\n"
        "def vit(device, dtype):\n    pass\n\n"
        "def inputs_for(n, device, dtype):\n    pass\n"
    )
    assert main(["run", f"{h}:vit", "--sweep"]) == 2  # its module has inputs_for, for build()
    assert "a shape sweep runs on build() only, not on vit()" in _one_error_line(capsys)
    assert main(["run", f"{f}:inputs_for"]) == 2  # not a build function
    assert "inputs_for(n, device, dtype) in " in _one_error_line(capsys)


def test_a_folder_and_a_missing_file(tmp_path, capsys) -> None:
    assert main(["run", str(tmp_path)]) == 2
    assert "workload path is a folder" in _one_error_line(capsys)
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    assert "workload file not found" in _one_error_line(capsys)


@pytest.mark.parametrize("command", ["report", "replay", "compare"])
def test_a_file_that_is_no_report(command, tmp_path, capsys) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text('{"title": "my notes"}')
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    for bad, needle in ((notes, "is not a dlcprof report"), (deep, "is corrupted")):
        argv = [command, str(bad)] + ([str(bad)] if command == "compare" else [])
        assert main(argv) == 2
        assert needle in _one_error_line(capsys)


# --- said by the worker, which alone can import the workload ------------------------------


def test_rendering_to_an_unwritable_place_is_one_line(tmp_path, capsys) -> None:
    from helpers.report import benchmark_session

    from dlcprof.report.folder import save_session

    folder = save_session(benchmark_session(), tmp_path / "rep")
    (tmp_path / "file").write_text("a regular file")
    assert main(["report", str(folder), "--html", "-o", str(tmp_path / "file" / "r.html")]) == 1
    line = _one_error_line(capsys)
    assert "cannot write" in line and "a parent path is not a directory" in line


def test_a_long_line_stays_one_line_off_a_terminal(monkeypatch) -> None:
    """An error naming a deep path, piped to a log: one line, not wrapped at the width."""
    import io

    from dlcprof.cli.output import say
    from dlcprof.console import make_console

    monkeypatch.delenv("COLUMNS", raising=False)
    buf = io.StringIO()
    out = make_console(file=buf)
    line = "✗ workload /" + "deep/" * 60 + "m.py raised MemoryError (line 9, in build)"
    say(out, line)
    say(out, "[yellow]Ctrl-C: stopping the worker and its compiler children…[/]")
    assert buf.getvalue().splitlines() == [
        line,
        "Ctrl-C: stopping the worker and its compiler children…",
    ]
