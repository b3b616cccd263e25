"""One public path per name.

A module is public when no part of its dotted path starts with ``_``; its public names are
its ``__all__`` (names a module merely imports are implementation details, PEP 8).  Every
public function and class of the package must be listed by exactly one public module, so
that a reader, the API page and a traceback all name it the same way; the top-level lazy
names (``rv.explore``, ``rv.play``, ``rv.compare``, ``rv.animate`` and the estimators) count
as listed by ``rgrasp_viz``.
"""

from __future__ import annotations

import collections
import importlib
import inspect
import pkgutil

import pytest

import rgrasp_viz as rv

LAZY_TOP = ("explore", "play", "compare", "animate", "SparseLinearRegression",
            "SparseLogisticRegression")


def _public_modules():
    mods = {"rgrasp_viz": rv}
    for info in pkgutil.walk_packages(rv.__path__, "rgrasp_viz."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        mods[info.name] = importlib.import_module(info.name)
    return mods


MODULES = _public_modules()


def _homes():
    homes = collections.defaultdict(list)
    for name, module in sorted(MODULES.items()):
        listed = list(getattr(module, "__all__", ()))
        if module is rv:
            listed += [n for n in LAZY_TOP if n not in listed]
        for attr in listed:
            obj = getattr(module, attr)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                homes[obj].append(f"{name}.{attr}")
    return homes


def test_every_public_module_declares_its_names():
    assert [name for name, m in MODULES.items() if not hasattr(m, "__all__")] == []


def test_every_listed_name_exists():
    missing = [f"{name}.{attr}" for name, m in MODULES.items()
               for attr in getattr(m, "__all__", ()) if not hasattr(m, attr)]
    assert missing == []


def test_one_public_path_per_name():
    several = sorted(paths for paths in _homes().values() if len(paths) > 1)
    assert several == []


@pytest.mark.parametrize("name", ["solve", "Problem", "Trace", "SolveResult", "Status",
                                  "SubProblem", "register_method", "make_regression"])
def test_the_core_names_live_at_the_top(name):
    assert _homes()[getattr(rv, name)] == [f"rgrasp_viz.{name}"]


def test_warnings_and_errors_live_in_exceptions():
    from rgrasp_viz import exceptions

    for name in exceptions.__all__:
        cls = getattr(exceptions, name)
        assert issubclass(cls, Warning | Exception)
        assert _homes()[cls] == [f"rgrasp_viz.exceptions.{name}"]
