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


def _is_private(dotted):
    return any(p.startswith("_") and not p.startswith("__") for p in dotted.split("."))


def test_nobody_imports_another_packages_private_parts():
    """No private module or name of another distribution (plotly's ``basedatatypes``
    internals, ipywidgets' ``_remove_buffers``, ...): their next release may change it without
    notice.  Inside the package, a private function or class (``_check_int``) is used only by
    the subpackage that defines it; private *modules* of a sibling subpackage may be imported
    (they are this package's own files)."""
    bad = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bad += [f"{name}:{node.lineno} imports {a.name}" for a in node.names
                        if not a.name.startswith("rgrasp_viz") and _is_private(a.name)]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module and \
                    not node.module.startswith(("rgrasp_viz", "__future__")):
                if _is_private(node.module) or any(_is_private(a.name) for a in node.names):
                    bad.append(f"{name}:{node.lineno} imports from {node.module}")
        here = _package_of(name, path)
        for target, names, node, _ in _imports(name, path):
            owner = _package_of(target, MODULES.get(target, Path("x.py")))
            bad += [f"{name}:{node.lineno} imports {target}.{n}" for n in names
                    if _is_private(n) and not _within(here, owner.split("._")[0])]
    assert bad == []


def test_the_private_import_check_sees_private_names():
    # what the dashboards' old figure widget imported, and what it may import
    tree = ast.parse("from ipywidgets.widgets.widget import _remove_buffers\n"
                     "from plotly.serializers import _py_to_js\n"
                     "from plotly._subplots import make_subplots\n"
                     "from plotly.io import to_json\n")
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [_is_private(n.module) or any(_is_private(a.name) for a in n.names)
            for n in nodes] == [True, True, True, False]


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
