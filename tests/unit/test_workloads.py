"""The workload contract: listing, resolving and loading (no torch.compile here)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.paths import REPO

from dlcprof import workloads as w
from dlcprof.worker.load import load
from dlcprof.workloads import WorkloadError

BUNDLED = {
    "pointwise-chain",
    "gelu-mlp",
    "pointwise-epilogue",
    "layernorm-residual",
    "attention",
    "transformer-block",
    "conv-bn-relu",
    "tiny-ops",
    "variable-length",
    "graph-breaks",
    "training-step",
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def one_line(e: pytest.ExceptionInfo[WorkloadError]) -> str:
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


# --- listing --------------------------------------------------------------------------


def test_list_bundled_does_not_import_torch():
    code = (
        "import dlcprof.workloads as w, sys; infos = w.list_bundled(); "
        "w.resolve('pointwise-chain'); "
        "assert infos, 'no bundled workloads'; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


def test_list_bundled_names_descriptions_and_order():
    infos = w.list_bundled()
    names = [i.name for i in infos]
    assert set(names) >= BUNDLED
    assert names[0] == w.DEFAULT_WORKLOAD == "pointwise-chain"
    for info in infos:
        assert info.description, info.name
        assert "\n" not in info.description
        assert Path(info.path).is_file()
        assert all(isinstance(s, int) and s > 0 for s in info.sizes + info.small_sizes)
    by_name = {i.name: i for i in infos}
    assert len(by_name["variable-length"].sizes) == 8
    assert by_name["variable-length"].has_inputs_for
    assert by_name["pointwise-chain"].sizes and by_name["pointwise-chain"].small_sizes
    assert not by_name["graph-breaks"].has_inputs_for


# --- resolve: every target form --------------------------------------------------------


def test_resolve_bundled_name_and_underscore_form():
    spec = w.resolve("pointwise-chain")
    assert spec.bundled and spec.name == "pointwise-chain" and spec.function == "build"
    assert spec.path and Path(spec.path).name == "pointwise_chain.py"
    assert w.resolve("pointwise_chain").name == "pointwise-chain"
    assert w.resolve("attention:build").function == "build"


def test_resolve_file_and_file_function(tmp_path):
    f = write(
        tmp_path / "my_model.py", "def build(device, dtype):\n    pass\ndef other(d, t): pass\n"
    )
    spec = w.resolve(str(f))
    assert spec.name == "my_model" and spec.path == str(f) and spec.function == "build"
    assert not spec.bundled and spec.module is None
    spec = w.resolve(f"{f}:other")
    assert spec.name == "my_model:other" and spec.function == "other"


def test_resolve_relative_file(tmp_path, monkeypatch):
    write(tmp_path / "m.py", "def build(device, dtype): pass\n")
    monkeypatch.chdir(tmp_path)
    spec = w.resolve("./m.py")
    assert spec.path == str(tmp_path / "m.py")
    assert w.resolve("m.py").path == str(tmp_path / "m.py")


def test_resolve_module_function_without_running_it(tmp_path, monkeypatch):
    # The package's __init__ raises: resolve must find the module without running it.
    write(tmp_path / "mypkg" / "__init__.py", "raise RuntimeError('imported!')\n")
    write(tmp_path / "mypkg" / "models.py", "def make(device, dtype): pass\n")
    monkeypatch.chdir(tmp_path)
    spec = w.resolve("mypkg.models:make")
    assert spec.module == "mypkg.models" and spec.function == "make" and spec.path is None
    assert spec.name == "mypkg.models:make"
    assert "mypkg" not in sys.modules


# --- resolve: one-line errors -----------------------------------------------------------


def test_missing_file():
    with pytest.raises(WorkloadError) as e:
        w.resolve("./nope.py")
    assert one_line(e) == (
        "workload file not found: ./nope.py (give a path to a .py file, "
        "a bundled name from 'dlcprof list', or module:function)"
    )


def test_missing_function_lists_what_is_defined(tmp_path, monkeypatch):
    write(tmp_path / "m.py", "def build(device, dtype): pass\ndef helper(): pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkloadError) as e:
        w.resolve("./m.py:buld")
    assert one_line(e) == "no function 'buld' in ./m.py (it defines: build, helper)"


def test_file_without_build(tmp_path, monkeypatch):
    write(tmp_path / "m.py", "def helper(): pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkloadError) as e:
        w.resolve("./m.py")
    assert one_line(e).startswith("./m.py defines no build(device, dtype) function")


def test_unknown_bundled_name():
    with pytest.raises(WorkloadError) as e:
        w.resolve("foo")
    msg = one_line(e)
    assert msg.startswith("unknown workload 'foo': bundled ones are pointwise-chain, ")
    for name in BUNDLED:
        assert name in msg


def test_module_not_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkloadError) as e:
        w.resolve("no_such_pkg.models:build")
    assert one_line(e).startswith("no module named 'no_such_pkg.models'")


def test_module_missing_function_is_the_workers_to_say(tmp_path, monkeypatch):
    # A module may export lazily: only importing it can tell, so resolve lets it
    # pass and load (in the worker) says what is missing, as bad input.
    write(tmp_path / "mods.py", "def make(device, dtype): pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = w.resolve("mods:nope")
    with pytest.raises(WorkloadError) as e:
        load(spec)
    assert one_line(e) == "no function 'nope' in mods (it defines: make)"
    assert e.value.bad_input
    sys.modules.pop("mods", None)


def test_syntax_error_file(tmp_path, monkeypatch):
    write(tmp_path / "bad.py", "def build(device, dtype):\n    return (\n\nx = 1 +\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkloadError) as e:
        w.resolve("./bad.py")
    msg = one_line(e)
    assert msg.startswith("workload ./bad.py has a syntax error: ")
    assert "(line " in msg
    # load() of such a spec says the same.
    spec = w.WorkloadSpec("bad", "./bad.py", path=str(tmp_path / "bad.py"))
    with pytest.raises(WorkloadError) as e2:
        load(spec)
    assert one_line(e2).startswith("workload ./bad.py has a syntax error: ")
    assert "bad.py" in e2.value.traceback


def test_folder_target(tmp_path):
    with pytest.raises(WorkloadError) as e:
        w.resolve(str(tmp_path))
    assert one_line(e).startswith("workload path is a folder")


# --- load --------------------------------------------------------------------------------


def test_load_raising_at_import(tmp_path, monkeypatch):
    write(
        tmp_path / "m.py",
        """
        import math
        def build(device, dtype): pass
        x = 1 / 0
        """,
    )
    monkeypatch.chdir(tmp_path)
    spec = w.resolve("./m.py")  # resolve does not execute it
    with pytest.raises(WorkloadError) as e:
        load(spec)
    assert one_line(e) == "workload ./m.py raised ZeroDivisionError: division by zero (line 3)"
    tb = e.value.traceback
    assert str(tmp_path / "m.py") in tb and "ZeroDivisionError" in tb
    assert "importlib" not in tb and "workloads.py" not in tb


def test_load_import_error_in_user_file(tmp_path, monkeypatch):
    write(tmp_path / "m.py", "import not_a_real_module_xyz\ndef build(device, dtype): pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorkloadError) as e:
        load(w.resolve("./m.py"))
    assert one_line(e) == (
        "workload ./m.py raised ModuleNotFoundError: "
        "No module named 'not_a_real_module_xyz' (line 1)"
    )


def test_load_file_imports_sibling_and_passes_size_only_when_accepted(tmp_path):
    write(tmp_path / "helpers_sib.py", "def double(x):\n    return 2 * x\n")
    f = write(
        tmp_path / "user.py",
        '''
        """Doubles things."""
        from helpers_sib import double
        SIZES = [1, 2, 3, 4]
        def build(device, dtype):
            return double, (device, dtype)
        def sized(device, dtype, size="default"):
            """Sized variant."""
            return double, [size]
        def inputs_for(n, device, dtype):
            return n
        ''',
    )
    lw = load(w.resolve(str(f)))
    assert lw.name == "user" and lw.description == "Doubles things."
    fn, args = lw.build("cpu", "f32", "small")
    assert fn(3) == 6 and args == ("cpu", "f32")
    assert lw.inputs_for is not None and lw.inputs_for(5, "cpu", "f32") == (5,)
    assert lw.sizes("default") == [1, 2, 3, 4] and lw.sizes("small") == [1, 2, 3]

    lw2 = load(w.resolve(f"{f}:sized"))
    assert lw2.description == "Sized variant."
    assert lw2.build("cpu", "f32", "small") == (lw2.module.double, ("small",))
    assert lw2.inputs_for is None  # inputs_for pairs with build() only


def test_load_module_function(tmp_path, monkeypatch):
    write(tmp_path / "wlpkg" / "__init__.py", "")
    write(
        tmp_path / "wlpkg" / "mod.py",
        '"""Module doc."""\ndef make(device, dtype):\n    return len, ((1, 2),)\n',
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    lw = load(w.resolve("wlpkg.mod:make"))
    fn, args = lw.build("cpu", None)
    assert fn(*args) == 2 and lw.description == "Module doc."
    for name in ("wlpkg", "wlpkg.mod"):
        sys.modules.pop(name, None)


def test_build_errors_are_one_line(tmp_path):
    f = write(
        tmp_path / "b.py",
        """
        def build(device, dtype):
            raise ValueError("bad dtype\\nsecond line")
        def nothing(device, dtype):
            return 42
        def noargs():
            return len, ()
        """,
    )
    lw = load(w.resolve(str(f)))
    with pytest.raises(WorkloadError) as e:
        lw.build("cpu", None)
    assert one_line(e) == f"workload {f} raised ValueError: bad dtype (line 2, in build)"
    assert not e.value.bad_input  # the user's code raised: a failed run, exit 1
    assert "b.py" in e.value.traceback
    with pytest.raises(WorkloadError) as e:
        load(w.resolve(f"{f}:nothing")).build("cpu", None)
    assert one_line(e) == f"nothing() in {f} must return (fn, args), got an int"
    assert e.value.bad_input  # the worker tells the CLI: one line, exit 2
    with pytest.raises(WorkloadError) as e:
        w.resolve(f"{f}:noargs")  # the source shows it: said before anything runs
    assert one_line(e).startswith(f"noargs() in {f} is not a build function: it must accept")


def test_bad_sizes(tmp_path):
    f = write(tmp_path / "s.py", "SIZES = [8, 'x']\ndef build(device, dtype): pass\n")
    with pytest.raises(WorkloadError) as e:
        load(w.resolve(str(f)))
    assert one_line(e).startswith(f"SIZES in {f} must be a list of positive integers")


# --- every bundled workload runs eagerly at size small --------------------------------------


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_loads_builds_and_runs_small(name):
    torch = pytest.importorskip("torch")
    lw = load(w.resolve(name))
    assert lw.name == name and lw.description
    fn, args = lw.build("cpu", torch.float32, "small")
    assert callable(fn) and isinstance(args, tuple) and args
    fn(*args)
    if lw.inputs_for is not None:
        small = lw.sizes("small")
        assert small
        fn(*lw.inputs_for(small[0], "cpu", torch.float32))
