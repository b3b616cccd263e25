"""The method registry: one :class:`MethodSpec` per method, read by every layer.

A method's name, aliases, display label, colour, implementation and defaults (step-size
rule, ``max_iter``, stagnation patience, which parameters it uses) live here and nowhere
else: the solver driver, :func:`~rgrasp_viz.default_eta`, the figures (labels, colours), the
dashboards (method picker), ``reproduce``, the command line and the tests all read this
table.  A new built-in method is one implementation plus one entry below; a learner's own
sub-problem solver joins the table through :func:`rgrasp_viz.register_method`.  The
built-in entries are in ``_builtins.py``.

Algorithm 2's iterate can live in two places ("readings", :data:`READINGS`): on all ``d``
coordinates, as the paper writes it (the default), or on the merged support ``T`` only, a
variant of this package that is labelled as such wherever it shows.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

__all__ = [
    "DEFAULT_READING",
    "READINGS",
    "MethodSpec",
    "get_method",
    "method_color",
    "method_label",
    "method_names",
    "normalize_reading",
    "run_label",
]


@dataclasses.dataclass(frozen=True)
class Reading:
    """Where Algorithm 2's inner iterate ``z`` lives."""

    key: str
    suffix: str  # appended to a method's label ("" for the paper's reading)
    ours: bool  # a variant of this package, not the paper's algorithm
    summary: str  # one line a student reads next to the control


READINGS = {
    "paper": Reading(
        "paper", "", False,
        "the paper's Algorithm 2: z moves on all d coordinates, so the H_|T| cuts of "
        "SVRGSP+ (m per epoch) pull it back to |T| entries and change the run"),
    "on_T": Reading(
        "on_T", " (on T)", True,
        "our variant: z moves only on the merged support T (cheaper steps); every entry of "
        "z is already in T, so H_|T| keeps all of them and m changes nothing"),
}
"""The two readings of Algorithm 2, by key ("paper" is the default)."""

DEFAULT_READING = "paper"

_READING_ALIASES = {"paper": "paper", "full": "paper", "on_T": "on_T", "restricted": "on_T"}


def normalize_reading(inner):
    """The reading key of ``inner`` (``"paper"`` or ``"on_T"``; ``"full"`` and
    ``"restricted"`` are accepted as their older names).

    Raises
    ------
    ValueError
        For anything else.
    """
    key = _READING_ALIASES.get(inner) if isinstance(inner, str) else None
    if key is None:
        raise ValueError(f"inner must be 'paper' (z on all d coordinates, the paper's "
                         f"Algorithm 2) or 'on_T' (our variant: z on T), got {inner!r}")
    return key


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """Everything the package knows about one method.

    Parameters
    ----------
    name : str
        Canonical key (lower case), e.g. ``"svrgsp+"``.
    label : str
        Display name as in the paper, e.g. ``"SVRGSP+"``.
    color : str
        ``#RRGGBB`` colour used by every figure.
    factory : callable
        ``factory(problem, params, workspace) -> step object`` (see
        :mod:`rgrasp_viz.solvers._methods`).
    eta_rule : str or callable or None
        Default step-size rule: a rule name of :mod:`rgrasp_viz.solvers._steps`, a callable
        ``rule(problem, s, inner, batch_size) -> float``, or None for a method without a step
        size (GraSP).
    aliases : tuple of str
        Other accepted spellings (matched after lower-casing and stripping).
    max_iter : int
        Default maximum number of outer iterations.
    patience : int
        Default stagnation window (iterations without an ``ftol`` improvement).
    stochastic : bool
        Samples indices and records inner events and checkpoints.
    epoch : bool
        Runs SVRG epochs of ``J`` inner steps (uses ``J``).
    uses_m : bool
        Uses ``m`` (SVRGSP+'s thresholdings per epoch).
    uses_batch : bool
        Uses ``batch_size`` (SG-HT).
    readings : tuple of str
        Readings of Algorithm 2 the method supports (empty: ``inner`` does not apply).
    framework : bool
        An instance of Algorithm 1 (records ``Z``, ``T`` and ``b``).
    in_paper : bool
        One of the six methods compared in the paper.
    builtin : bool
        Shipped with the package (cannot be unregistered).
    description : str
        One line for pickers and tables.
    """

    name: str
    label: str
    color: str
    factory: Callable
    eta_rule: object = None
    aliases: tuple = ()
    max_iter: int = 50
    patience: int = 5
    stochastic: bool = False
    epoch: bool = False
    uses_m: bool = False
    uses_batch: bool = False
    readings: tuple = ()
    framework: bool = False
    in_paper: bool = True
    builtin: bool = True
    description: str = ""

    @property
    def has_step(self):
        """bool: whether the method takes a step size ``eta``."""
        return self.eta_rule is not None


_REGISTRY: dict[str, MethodSpec] = {}
_ALIASES: dict[str, str] = {}
_OTHER_COLOR = "#7F7F7F"
_LOCK = threading.RLock()
"""Guards :data:`_REGISTRY` and :data:`_ALIASES`: a registration checks its names and adds
them in one step (two threads registering one name: one succeeds, one gets the error), and
readers iterate over snapshots taken under it (never over a dict another thread changes)."""


def specs():
    """tuple of MethodSpec: a snapshot of the registry, in registration order."""
    with _LOCK:
        return tuple(_REGISTRY.values())


def _key(name):
    return str(name).strip().lower()


def add(spec):
    """Add ``spec`` to the registry (names and aliases must be new)."""
    names = [spec.name, *(_key(a) for a in spec.aliases)]
    if len(set(names)) != len(names):
        raise ValueError(f"method {spec.name!r}: its name and aliases repeat ({names})")
    with _LOCK:
        for key in names:
            if key in _ALIASES:
                raise ValueError(f"method name {key!r} is already registered (as "
                                 f"{_ALIASES[key]!r}); unregister it first or pick another "
                                 "name")
        _REGISTRY[spec.name] = spec
        for key in names:
            _ALIASES[key] = spec.name
    return spec


def remove(name):
    """Remove a non-built-in method; return its spec."""
    with _LOCK:
        spec = get_method(name)
        if spec.builtin:
            raise ValueError(f"{spec.name!r} is a built-in method and cannot be unregistered")
        del _REGISTRY[spec.name]
        for key in [k for k, v in _ALIASES.items() if v == spec.name]:
            del _ALIASES[key]
    return spec


def get_method(name):
    """The :class:`MethodSpec` of ``name`` (any registered spelling: ``"FG-HT"`` works).

    Raises
    ------
    TypeError
        When ``name`` is not a string.
    ValueError
        When no method of that name is registered.
    """
    if isinstance(name, MethodSpec):
        return name
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {type(name).__name__}")
    with _LOCK:
        key = _ALIASES.get(_key(name))
        spec = None if key is None else _REGISTRY.get(key)
    if spec is None:
        raise ValueError(f"unknown method {name!r}; choose one of {list(method_names())}")
    return spec


def method_names(*, paper_only=False):
    """Canonical names of the registered methods, in registration order.

    Parameters
    ----------
    paper_only : bool, default False
        Only the six methods compared in the paper.

    Returns
    -------
    tuple of str
    """
    return tuple(s.name for s in specs() if s.in_paper or not paper_only)


def method_label(method):
    """The display name of ``method`` (its own string when unknown)."""
    try:
        return get_method(method).label
    except (TypeError, ValueError):
        return str(method)


def method_color(method):
    """The colour of ``method`` (grey when unknown)."""
    try:
        return get_method(method).color
    except (TypeError, ValueError):
        return _OTHER_COLOR


def run_label(run, inner=None):
    """The label of a run: the method's label, marked ``(on T)`` for our variant of
    Algorithm 2 (the paper's reading is unmarked).  The one run-label helper: tables, legends,
    figure titles and the command line all name runs with it.

    Parameters
    ----------
    run : str, Trace, SolveResult or fitted estimator
        A method name (then ``inner`` gives the reading), or a run, whose method and reading
        are read from its trace.
    inner : str, optional
        The run's reading (``trace.meta["inner"]``) when ``run`` is a method name; ignored
        for methods without readings.
    """
    if not isinstance(run, str):
        trace = run
        for attr in ("trace", "trace_"):  # a SolveResult, a fitted estimator
            if getattr(trace, attr, None) is not None:
                trace = getattr(trace, attr)
                break
        run, inner = trace.method, trace.meta.get("inner")
    label = method_label(run)
    if inner is None:
        return label
    try:
        spec = get_method(run)
        reading = READINGS[normalize_reading(inner)]
    except (TypeError, ValueError):
        return label
    return label + reading.suffix if spec.readings else label
