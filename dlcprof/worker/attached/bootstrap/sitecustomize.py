"""dlcprof's bootstrap (dlcprof/worker/attached): on PYTHONPATH, Python runs this file
at startup in every process of the program's tree.

It chains to the sitecustomize it shadows, then only waits: a finder on
``sys.meta_path`` notices when ``torch`` has finished loading (not when it is
looked up: ``_WaitFor``), then when
``torch._dynamo`` has (``torch.compile`` imports it; ``import torch`` does
not), and then installs dlcprof's probes. A process that never compiles
(a DataLoader worker, torchrun's agent) runs nothing of dlcprof; Inductor's
compile workers (``TORCH_WARM_POOL=0``) are skipped. Any failure of ours is
swallowed with one line on stderr: the program runs on.
"""

import functools
import importlib.machinery
import importlib.util
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
# The marks left on torch's modules for the probes, named there too.
_JOINED_T = "__dlcprof_joined_t__"  # rendezvous.JOINED_T
_LOADED_T = "__dlcprof_loaded_t__"  # probe.LOADED_T
_CACHE_DIR_EXISTED = "__dlcprof_cache_dir_existed__"  # probe.CACHE_DIR_EXISTED


def _chain():
    """Run the sitecustomize this one hides (Debian and Ubuntu ship one)."""
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # as site.py does for its own sitecustomize
        print(f"Error in sitecustomize ({spec.origin}): {type(e).__name__}: {e}", file=sys.stderr)


def _install(torch):
    try:
        if "dlcprof" not in sys.modules:
            root = os.path.join(os.environ["DLCPROF_ATTACH_ROOT"], "dlcprof")
            spec = importlib.util.spec_from_file_location(
                "dlcprof", os.path.join(root, "__init__.py"), submodule_search_locations=[root]
            )
            assert spec is not None and spec.loader is not None  # a file location always has both
            package = importlib.util.module_from_spec(spec)
            sys.modules["dlcprof"] = package
            spec.loader.exec_module(package)
        from dlcprof.worker.attached import probe

        probe.install(torch)
    except Exception as e:  # never break the user's program
        print(f"dlcprof: probes not installed in pid {os.getpid()}: {e!r}", file=sys.stderr)


# Plain classes (the import system needs only these methods): importlib.abc
# would import importlib.resources in every Python the program starts,
# Inductor's own short-lived helpers included (benchmarks/RESULTS.md §9).
class _Loader:
    def __init__(self, loader, then):
        self.loader = loader
        self.then = then

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def exec_module(self, module):
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.then()


class _WaitFor:
    """Finds nothing itself: runs ``then()`` once module ``name`` has finished
    loading, and only then leaves ``sys.meta_path``.

    A lookup is no load (``importlib.util.find_spec("torch")``, as datasets and
    transformers do, returns a spec nobody may execute), so each lookup's spec
    gets a loader of ours, and the first of them to run calls ``then()``. A
    module loaded by a loader never wrapped (a finder of the program's own ahead
    of this one) is noticed at the next lookup of one of its submodules."""

    def __init__(self, name, then):
        self.name = name
        self.then = then
        self.done = False
        # Done, or asking the other finders (a lookup from one of them is theirs):
        # one test for every import of the program while it waits.
        self.off = False

    def find_spec(self, fullname, path, target=None):
        if self.off or not fullname.startswith(self.name):
            return None
        if fullname == self.name:
            return self._wrapped(fullname, path, target)
        if fullname[len(self.name)] == "." and _loaded(self.name):
            self.fire()
            # then() may have put a waiter for this very module first: it gets this lookup.
            for finder in sys.meta_path:
                if isinstance(finder, _WaitFor) and finder.name == fullname:
                    return finder.find_spec(fullname, path, target)
        return None

    def _wrapped(self, fullname, path, target):
        self.off = True
        try:
            spec = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None) if finder is not self else None
                spec = find(fullname, path, target) if find else None
                if spec is not None:
                    break
        finally:
            self.off = self.done
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, self.fire)
        return spec

    def fire(self):
        if self.done:
            return
        self.done = self.off = True
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        self.then()


def _loaded(name):
    """Module ``name`` has finished executing (importlib marks a module's spec
    ``_initializing`` while it runs)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(module.__spec__, "_initializing", False)


def _mark_rendezvous():
    """Note when init_process_group returns (stdlib only): the probes install at
    Dynamo's import, which a program reaches after its rendezvous, and then
    send this time as the rendezvous (worker/attached/rendezvous.py reads it)."""
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    original = getattr(c10d, "init_process_group", None)
    if c10d is None or original is None:
        return

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        result = original(*args, **kwargs)
        setattr(c10d, _JOINED_T, time.time())
        return result

    # vars(): a module's own attributes, which a checker cannot see on ModuleType.
    vars(c10d)["init_process_group"] = init_process_group
    dist = sys.modules.get("torch.distributed")
    if getattr(dist, "init_process_group", None) is original:
        vars(dist)["init_process_group"] = init_process_group


# The data-parallel wrappers whose construction is marked, as (module, class):
# worker/probes/ddp.py (WRAPPERS) reads the marks and names them.
_WRAPPERS = (
    ("torch.nn.parallel.distributed", "DistributedDataParallel"),
    ("torch.distributed.fsdp.fully_sharded_data_parallel", "FullyShardedDataParallel"),
)
_BUILT = "__dlcprof_built__"  # ddp.BUILT


def _mark_wrappers():
    """Mark each data-parallel wrapper built (stdlib only): the program builds it
    before it compiles, so before the probes install; the one place that wraps
    the constructors. DDP's module comes with torch; FSDP's with its package or
    Dynamo, whichever the program imports first: marked as it loads."""
    for name, cls in _WRAPPERS:
        if _loaded(name):
            _mark_built(sys.modules[name], cls)
        else:
            sys.meta_path.insert(0, _WaitFor(name, functools.partial(_mark_loaded, name, cls)))


def _mark_loaded(name, cls):
    try:
        _mark_built(sys.modules[name], cls)
    except Exception as e:  # never break the user's program
        print(f"dlcprof: {cls} not marked in pid {os.getpid()}: {e!r}", file=sys.stderr)


def _mark_built(module, cls):
    wrapper = getattr(module, cls, None)
    init = getattr(wrapper, "__init__", None)
    if wrapper is None or init is None or getattr(init, "__dlcprof_marks__", False):
        return

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        setattr(wrapper, _BUILT, True)
        init(self, *args, **kwargs)

    setattr(__init__, "__dlcprof_marks__", True)  # noqa: B010 - a checker sees no such attribute
    wrapper.__init__ = __init__


def _when_compiling():
    """torch has finished importing: install now if Dynamo came with it, else
    once it is imported (the probes cost an import a process that never
    compiles need not pay)."""
    setattr(sys.modules["torch"], _LOADED_T, time.time())
    # Whether TORCHINDUCTOR_CACHE_DIR existed before Dynamo's import creates it
    # (worker/attached/probe.py: CACHE_DIR_EXISTED).
    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if folder:
        setattr(sys.modules["torch"], _CACHE_DIR_EXISTED, os.path.isdir(folder))
    try:
        _mark_rendezvous()
        _mark_wrappers()
    except Exception as e:  # never break the user's program
        print(
            f"dlcprof: rendezvous or wrappers not marked in pid {os.getpid()}: {e!r}",
            file=sys.stderr,
        )
    if "torch._dynamo" in sys.modules:
        _install(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _WaitFor("torch._dynamo", lambda: _install(sys.modules["torch"])))


_chain()
if os.environ.get("DLCPROF_ATTACH_SOCKET") and os.environ.get("TORCH_WARM_POOL") != "0":
    sys.meta_path.insert(0, _WaitFor("torch", _when_compiling))
