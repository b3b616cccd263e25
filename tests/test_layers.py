"""The package's layering, read from its source: no import circle, the solver core never
imports the layers above it, nobody reaches into another package's private parts, and an
import inside a function says why it waits.

The layers (ARCHITECTURE.md): exceptions <- kernels <- problems / solvers / trace <- analysis /
reference <- viz <- reproduce; the estimators sit beside reproduce, over the solvers.  These
tests parse every module of ``rgrasp_viz`` with :mod:`ast` (nothing is imported), so they
also see imports that only run inside a function.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rgrasp_viz"

CORE = ("rgrasp_viz._problems", "rgrasp_viz._trace", "rgrasp_viz._result", "rgrasp_viz.solvers",
        "rgrasp_viz._kernels", "rgrasp_viz.analysis", "rgrasp_viz.reference",
        "rgrasp_viz.losses", "rgrasp_viz.exceptions", "rgrasp_viz.datasets")
"""The solver core and what it stands on: never imports a layer above it."""

ABOVE_CORE = ("rgrasp_viz.viz", "rgrasp_viz.reproduce", "rgrasp_viz._estimators",
              "rgrasp_viz._cli")

MARKERS = ("# optional", "# lazy")
"""How an import inside a function says why it waits: ``# optional: <extra>`` for a
dependency the user may not have installed, ``# lazy: <why>`` for one kept out of
``import rgrasp_viz`` on purpose (plotly, ipywidgets, IPython)."""


def _modules():
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _package_of(name, path):
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _lazy_getattr_nodes(tree, path):
    """Nodes of a package's PEP 562 ``__getattr__`` (how ``rv.explore`` loads the dashboards
    on first use): its imports are the documented lazy entry points, not layering edges."""
    if path.name != "__init__.py":
        return set()
    return {id(n) for f in tree.body if isinstance(f, ast.FunctionDef)
            and f.name == "__getattr__" for n in ast.walk(f)}


def _imports(name, path):
    """``(target module, imported names, node, inside a function)`` for each import of a
    module of ``rgrasp_viz`` in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    lazy = _lazy_getattr_nodes(tree, path)
    in_function = {id(n) for f in ast.walk(tree)
                   if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for n in ast.walk(f)}
    pkg = _package_of(name, path)
    out = []
    for node in ast.walk(tree):
        if id(node) in lazy:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("rgrasp_viz"):
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                if sub in MODULES:  # from pkg import module
                    out.append((sub, (), node, id(node) in in_function))
                else:
                    out.append((mod, (alias.name,), node, id(node) in in_function))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rgrasp_viz"):
                    out.append((alias.name, (), node, id(node) in in_function))
    return out


def _graph():
    return {name: {t for t, *_ in _imports(name, path) if t in MODULES and t != name}
            for name, path in MODULES.items()}


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _within(name, prefix):
    return name == prefix or name.startswith(prefix + ".")


def test_the_package_is_parsed():
    # the checks below are only as good as the module list they walk
    assert {"rgrasp_viz", "rgrasp_viz.solvers._driver", "rgrasp_viz.exceptions",
            "rgrasp_viz.viz.figures"} <= set(MODULES)
    assert any(_imports("rgrasp_viz.solvers._driver", MODULES["rgrasp_viz.solvers._driver"]))


def test_no_import_circle():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("core", CORE)
def test_the_core_never_imports_the_layers_above(core):
    bad = [(name, target) for name, path in MODULES.items() if _within(name, core)
           for target, *_ in _imports(name, path)
           if any(_within(target, top) for top in ABOVE_CORE)]
    assert bad == []


def test_exceptions_import_nothing_of_the_package():
    tree = ast.parse(MODULES["rgrasp_viz.exceptions"].read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _owner(target):
    """The package whose private parts ``target`` is: ``a.b._c`` -> ``a.b``."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_nobody_imports_another_packages_private_parts():
    """A private module or name (``_x``) is imported only from inside the package that owns
    it (its own folder or a folder below it)."""
    bad = []
    for name, path in MODULES.items():
        here = _package_of(name, path)
        for target, names, node, _ in _imports(name, path):
            owner = _owner(target)
            if owner is not None and not _within(here, owner):
                bad.append(f"{name}:{node.lineno} imports {target}")
            for n in names:
                if n.startswith("_") and not n.startswith("__") and not _within(
                        here, _package_of(target, MODULES.get(target, Path("x.py")))):
                    bad.append(f"{name}:{node.lineno} imports {target}.{n}")
    assert bad == []


def test_imports_inside_functions_say_why_they_wait():
    bad = []
    for name, path in MODULES.items():
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))
        lazy = _lazy_getattr_nodes(tree, path)
        for f in ast.walk(tree):
            if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(f):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in lazy:
                    text = " ".join(lines[node.lineno - 1: node.end_lineno])
                    if not any(m in text for m in MARKERS):
                        bad.append(f"{name}:{node.lineno}: {text.strip()}")
    assert bad == []
