"""Problem container (validated once, at the boundary) and synthetic data generators.

A :class:`Problem` holds the data of

.. math:: \\min_x F(x) = \\frac1n \\sum_{i=1}^n f_i(w_i^T x) \\quad \\text{s.t.}\\ \\|x\\|_0 \\le s

in a canonical form -- float64, C-contiguous dense arrays or canonical CSR -- so that
solvers and compiled kernels downstream never need to re-check their inputs.

:func:`make_regression` reproduces the synthetic data of Section 5.2 of Shang et al.
(IJCAI 2019); :func:`make_classification` is the analogous logistic-regression model.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import operator
import warnings
import weakref

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from . import losses as _losses
from .exceptions import DataWarning

__all__ = ["Problem", "as_problem", "make_regression", "make_classification"]

# dtype kinds that can be safely represented as float64: bool, signed, unsigned, float
_REAL_KINDS = "biuf"


def _check_real_dtype(dtype, argname):
    if dtype.kind not in _REAL_KINDS:
        raise TypeError(f"{argname} must hold real numbers (bool, int or float); got dtype {dtype}")


def _check_finite(values, argname):
    # min and max propagate NaN and reach +-inf: two passes, no temporary the size of the data
    if values.size and not (np.isfinite(np.min(values)) and np.isfinite(np.max(values))):
        raise ValueError(f"{argname} contains non-finite values (NaN or inf)")


def _as_design(W):
    """Canonical float64 design matrix: C-contiguous ndarray or canonical csr_matrix."""
    if sp.issparse(W):
        _check_real_dtype(W.dtype, "W")
        if W.ndim != 2:
            raise ValueError(f"W must be 2-D, got shape {W.shape}")
        if (
            isinstance(W, sp.csr_matrix)
            and W.dtype == np.float64
            and W.has_canonical_format
            and W.has_sorted_indices
        ):
            return W
        # A fresh csr_matrix copy, so canonicalising never touches the caller's object.
        W = sp.csr_matrix(W, dtype=np.float64, copy=True)
        W.sum_duplicates()
        W.sort_indices()
        return W
    arr = np.asarray(W)
    _check_real_dtype(arr.dtype, "W")
    if arr.ndim != 2:
        raise ValueError(f"W must be 2-D, got {arr.ndim}-D array of shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _fold_width(size):
    """The smallest prime larger than ``size`` (the width of :func:`_checksum`'s fold)."""
    w = max(size, 1) + 1
    while any(w % q == 0 for q in range(2, math.isqrt(w) + 1)):
        w += 1
    return w


def _checksum(a, width):
    """Exact, position-sensitive checksum of an array's contents, in one pass.

    The entries' bit patterns (as unsigned integers) are summed modulo ``2**64`` by residue
    class of their flat position modulo ``width`` (a prime larger than every dimension).
    Changing any single entry always changes the result (integer sums are exact, unlike
    floating-point ones), and so does swapping two rows or two columns of a 2-D array with
    different contents, since such a swap moves entries between residue classes.
    """
    flat = np.ascontiguousarray(a).reshape(-1)
    bits = flat.view(f"u{flat.itemsize}")
    q, r = divmod(bits.size, width)
    out = np.zeros(width, dtype=np.uint64)
    if q:
        np.add.reduce(bits[: q * width].reshape(q, width), axis=0, dtype=np.uint64, out=out)
    out[:r] += bits[q * width :]
    return out.tobytes()


class _DataCache(dict):
    """Values derived from a :class:`Problem`'s data, dropped whenever the data change.

    Membership tests (``key in cache``) first compare a checksum of the problem's data
    (:meth:`Problem.data_fingerprint`) with the one the stored values were computed from and
    empty the cache when they differ, so the pattern ``if key not in cache: cache[key] =
    compute()`` never returns a value computed from older data.
    """

    def __init__(self, problem):
        super().__init__()
        self._problem = weakref.ref(problem)
        self._fingerprint = None
        self._trusted = 0  # > 0 inside Problem.cache_scope(): checked once at its entry

    def __contains__(self, key):
        problem = self._problem()
        if problem is not None and not self._trusted:
            fp = problem.data_fingerprint()
            if fp != self._fingerprint:
                self.clear()
                self._fingerprint = fp
        return super().__contains__(key)


def _as_vector(v, length, argname):
    arr = np.asarray(v)
    _check_real_dtype(arr.dtype, argname)
    if arr.ndim != 1 or arr.shape[0] != length:
        raise ValueError(f"{argname} must have shape ({length},), got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


class Problem:
    """Data of a sparsity-constrained empirical-risk problem, validated and canonical.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix/array, shape (n, d)
        Design matrix, one sample :math:`w_i^T` per row. Dense input is stored as a
        C-contiguous float64 ndarray; sparse input of any format is stored as a
        canonical ``scipy.sparse.csr_matrix`` (float64, no duplicates, sorted indices).
        Bool/int/float32 data are upcast to float64.
    y : array_like, shape (n,)
        Responses (``"squares"``) or labels (``"logistic"``). For the logistic loss the
        labels must be in {-1, +1}; labels in {0, 1} (every value 0 or 1) are also
        accepted and converted on a copy, 0 -> -1 and 1 -> +1.
    loss : {"squares", "logistic"}, default "squares"
        Per-sample loss, see :mod:`rgrasp_viz.losses`.
    x_true : array_like, shape (d,), optional
        Ground-truth parameter (e.g. :math:`x^*` of a synthetic problem), used by
        :meth:`rel_error`.
    name : str, optional
        Label used in plots and ``repr``.
    l2 : float, default 0
        Optional ridge term: the objective becomes ``F(x) + (l2 / 2) ||x||^2``, and every
        component ``f_i`` gets the same term.  0 is the paper's setting.  A small ``l2``
        gives the logistic loss a minimiser on data that are (nearly) separable on some
        coordinates, where GraSP's exact step is otherwise ill-posed (as GraSP's authors
        regularise it).

    Raises
    ------
    TypeError
        If `W`, `y` or `x_true` has a complex, object or string dtype.
    ValueError
        If shapes are inconsistent, the data is empty, any of `W`, `y`, `x_true` holds
        NaN/inf, `loss` is unknown, or logistic labels are not in {-1, +1} / {0, 1}.

    Notes
    -----
    Inputs are never modified. Input that is already canonical (float64 C-contiguous
    ndarray, canonical float64 ``csr_matrix``) is stored without copying, so mutating it
    afterwards would also change the problem.

    Quantities derived from the data and kept between solves (the estimates behind the
    default step sizes, the row and column norms) are stored with :meth:`cached`, which
    recomputes them when the data have changed since: editing ``W`` or ``y`` in place (or
    through the caller's array), or assigning new ones, never leaves a stale step size.

    Examples
    --------
    >>> import numpy as np
    >>> p = Problem(np.eye(3), [1.0, 2.0, 3.0])
    >>> p.objective(np.zeros(3))  # (1 + 4 + 9) / (2 * 3)
    2.3333333333333335
    """

    def __init__(self, W, y, loss="squares", x_true=None, name=None, l2=0.0):
        self._loss_code = _losses.check_loss(loss)
        self.loss = loss
        if isinstance(l2, bool) or not isinstance(l2, numbers.Real) or not (
                np.isfinite(l2) and l2 >= 0):
            raise ValueError(f"l2 must be a non-negative finite number, got {l2!r}")
        self.l2 = float(l2)

        W = _as_design(W)
        n, d = W.shape
        if n == 0 or d == 0:
            raise ValueError(f"W is empty data: shape {W.shape} (need n >= 1 and d >= 1)")
        _check_finite(W.data if sp.issparse(W) else W, "W")

        y_arr = np.asarray(y)
        _check_real_dtype(y_arr.dtype, "y")
        if y_arr.ndim != 1 or y_arr.shape[0] != n:
            raise ValueError(
                f"y must be 1-D with len(y) == n == {n} (W has shape {W.shape}), "
                f"got y with shape {y_arr.shape}"
            )
        y_arr = np.ascontiguousarray(y_arr, dtype=np.float64)
        _check_finite(y_arr, "y")
        if self._loss_code == _losses.LOSS_CODES["logistic"]:
            y_arr = self._check_labels(y_arr)

        if x_true is not None:
            x_arr = np.asarray(x_true)
            _check_real_dtype(x_arr.dtype, "x_true")
            if x_arr.ndim != 1 or x_arr.shape[0] != d:
                raise ValueError(f"x_true must be 1-D of length d == {d}, got shape {x_arr.shape}")
            x_true = np.ascontiguousarray(x_arr, dtype=np.float64)
            _check_finite(x_true, "x_true")

        self.W = W
        self.y = y_arr
        self.x_true = x_true
        self.name = name
        self._rgrasp_cache = _DataCache(self)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_rgrasp_cache"]  # holds a weak reference; rebuilt empty
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._rgrasp_cache = _DataCache(self)

    # ------------------------------------------------------------------ derived data
    def data_fingerprint(self):
        """A checksum of the data that derived quantities depend on (``W``, ``y``, the loss).

        One pass over ``W`` (about as long as summing it); it changes whenever any entry of
        ``W`` or ``y`` changes (see :func:`_checksum`), so :meth:`cached` can tell that
        stored values are out of date.

        Returns
        -------
        tuple
            Comparable with ``==``; equal fingerprints mean unchanged data.
        """
        W, y = self.W, np.asarray(self.y)
        width = _fold_width(max(W.shape))
        if sp.issparse(W):
            parts = (_checksum(W.data, width), _checksum(W.indices, width),
                     _checksum(W.indptr, width))
        else:
            parts = (_checksum(np.asarray(W), width),)
        return (self.loss, getattr(self, "l2", 0.0), type(W).__name__, W.shape, *parts,
                y.shape, _checksum(y, width))

    @contextlib.contextmanager
    def cache_scope(self):
        """Check the data once for the whole block: inside it, :meth:`cached` trusts the
        fingerprint taken at entry (one pass over ``W`` per solve instead of one per
        lookup).  The data must not be edited inside the block."""
        cache = self._rgrasp_cache
        if not cache._trusted:
            cache.__contains__(None)  # refresh against the current data
        cache._trusted += 1
        try:
            yield self
        finally:
            cache._trusted -= 1

    def cached(self, key, compute):
        """``compute()``, computed once per state of the data and stored under ``key``.

        The stored value is returned as long as :meth:`data_fingerprint` is unchanged; after
        any change of ``W``, ``y`` or the loss, every stored value is dropped and
        ``compute()`` is called again.  Solvers keep their step-size estimates here.

        Parameters
        ----------
        key : hashable
            Names the quantity (e.g. ``("row", k)``).
        compute : callable
            Called without arguments when no up-to-date value is stored.

        Returns
        -------
        object
            What `compute` returned (now or for the same data before).
        """
        cache = self._rgrasp_cache
        if key not in cache:  # checks the fingerprint
            cache[key] = compute()
        return cache[key]

    @staticmethod
    def _check_labels(y):
        values = np.unique(y)
        if np.all(np.isin(values, (-1.0, 1.0))):
            return y
        if np.all(np.isin(values, (0.0, 1.0))):
            # np.where allocates a new array, so the caller's labels stay untouched
            return np.where(y == 0.0, -1.0, 1.0)
        bad = values[~np.isin(values, (-1.0, 1.0))]
        shown = ", ".join(repr(float(v)) for v in bad[:5])
        more = f" (and {bad.size - 5} more)" if bad.size > 5 else ""
        raise ValueError(
            "y must hold labels in {-1, +1} (or {0, 1}, converted to -1/+1) for the "
            f"logistic loss; found other values: {shown}{more}"
        )

    # ------------------------------------------------------------------ properties
    @property
    def n(self):
        """int: Number of samples (rows of `W`)."""
        return self.W.shape[0]

    @property
    def d(self):
        """int: Number of features (columns of `W`)."""
        return self.W.shape[1]

    @property
    def is_sparse(self):
        """bool: Whether `W` is stored as a CSR matrix."""
        return sp.issparse(self.W)

    @property
    def nnz(self):
        """int: Stored entries of `W` (``n * d`` when dense)."""
        return int(self.W.nnz) if self.is_sparse else self.n * self.d

    @property
    def density(self):
        """float: ``nnz / (n * d)``."""
        return self.nnz / (self.n * self.d)

    @property
    def loss_code(self):
        """int: Integer code of the loss (see :data:`rgrasp_viz.losses.LOSS_CODES`)."""
        return self._loss_code

    # ------------------------------------------------------------------ evaluation
    def _x(self, x):
        return _as_vector(x, self.d, "x")

    def margins(self, x):
        """Margins :math:`W x`.

        Parameters
        ----------
        x : array_like, shape (d,)
            Model parameter.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
        """
        return np.asarray(self.W @ self._x(x), dtype=np.float64).ravel()

    def objective(self, x):
        """Objective :math:`F(x)`, see :func:`rgrasp_viz.losses.objective`.

        Parameters
        ----------
        x : array_like, shape (d,)
            Model parameter.

        Returns
        -------
        float
        """
        return _losses.objective(self.W, self.y, self._x(x), self.loss, self.l2)

    def gradient(self, x):
        """Full gradient :math:`\\nabla F(x)`.

        Parameters
        ----------
        x : array_like, shape (d,)
            Model parameter.

        Returns
        -------
        numpy.ndarray of float64, shape (d,)
        """
        return _losses.gradient(self.W, self.y, self._x(x), self.loss, l2=self.l2)[0]

    def sample_gradient(self, x, i):
        """Gradient :math:`\\nabla f_i(x)` of one component.

        Parameters
        ----------
        x : array_like, shape (d,)
            Model parameter.
        i : int
            Sample index.

        Returns
        -------
        numpy.ndarray of float64, shape (d,)
        """
        return _losses.sample_gradient(self.W, self.y, self._x(x), i, self.loss, self.l2)

    def rel_error(self, x):
        """Estimation error :math:`\\|x - x^*\\|_2 / \\|x^*\\|_2` as plotted in the paper.

        Parameters
        ----------
        x : array_like, shape (d,)
            Estimate.

        Returns
        -------
        float
            NaN when `x_true` is unknown; the absolute error ``||x - x_true||`` when
            ``x_true`` is the zero vector.
        """
        x = self._x(x)
        if self.x_true is None:
            return float("nan")
        err = float(np.linalg.norm(x - self.x_true))
        ref = float(np.linalg.norm(self.x_true))
        return err / ref if ref > 0.0 else err

    @property
    def s_star(self):
        """int or None: the number of nonzeros of ``x_true`` (None when unknown)."""
        return None if self.x_true is None else int(np.count_nonzero(self.x_true))

    @property
    def default_s(self):
        """int or None: the paper's sparsity level ``s = 1.2 s*`` (Section 5.2), rounded and
        clipped to ``[1, d]``; None when ``x_true`` is unknown."""
        if self.x_true is None:
            return None
        return max(1, min(self.d, round(1.2 * self.s_star)))

    def col_sq_norms(self):
        """Squared Euclidean norm of every column of `W` (cached while `W` is unchanged,
        read-only).

        Returns
        -------
        numpy.ndarray of float64, shape (d,)
        """
        def compute():
            W = self.W
            if self.is_sparse:
                out = np.bincount(W.indices, weights=W.data * W.data, minlength=self.d)
            else:
                out = np.einsum("ij,ij->j", W, W)
            out = np.ascontiguousarray(out, dtype=np.float64)
            out.flags.writeable = False  # shared cache: guard against accidental edits
            return out

        return self.cached("col_sq_norms", compute)

    def row_sq_norms(self):
        """Squared Euclidean norm of every row :math:`\\|w_i\\|^2` (cached while `W` is unchanged,
        read-only).

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
        """
        def compute():
            W = self.W
            if self.is_sparse:
                rows = np.repeat(np.arange(self.n), np.diff(W.indptr))
                out = np.bincount(rows, weights=W.data * W.data, minlength=self.n)
            else:
                out = np.einsum("ij,ij->i", W, W)
            out = np.ascontiguousarray(out, dtype=np.float64)
            out.flags.writeable = False
            return out

        return self.cached("row_sq_norms", compute)

    def __repr__(self):
        storage = "CSR" if self.is_sparse else "dense"
        return (
            f"Problem(name={self.name!r}, n={self.n}, d={self.d}, loss={self.loss!r}, "
            f"{storage}, density={self.density:.3g}"
            + (f", l2={self.l2:g})" if self.l2 else ")")
        )


def as_problem(data, loss=None, x_true=None):
    """Coerce user input into a :class:`Problem`.

    Parameters
    ----------
    data : Problem or tuple/list ``(W, y)``
        A ready problem (returned unchanged) or the raw design matrix and responses.
    loss : {"squares", "logistic"}, optional
        Loss for a raw ``(W, y)`` pair (default ``"squares"``). For a :class:`Problem`
        it must be omitted or equal ``data.loss``.
    x_true : array_like, shape (d,), optional
        Ground truth for a raw ``(W, y)`` pair. For a :class:`Problem` it must be
        omitted or equal ``data.x_true``.

    Returns
    -------
    Problem

    Raises
    ------
    TypeError
        If `data` is neither a :class:`Problem` nor a 2-sequence ``(W, y)``.
    ValueError
        If `loss` or `x_true` contradicts an existing :class:`Problem`, or the raw data
        fails validation.
    """
    if isinstance(data, Problem):
        if loss is not None and loss != data.loss:
            raise ValueError(
                f"loss={loss!r} conflicts with the Problem's loss {data.loss!r}; "
                "build a new Problem to change the loss"
            )
        if x_true is not None and (
            data.x_true is None or not np.array_equal(np.asarray(x_true), data.x_true)
        ):
            raise ValueError(
                "x_true conflicts with the Problem's x_true; pass it when building "
                "the Problem instead"
            )
        return data
    if isinstance(data, (tuple, list)) and len(data) == 2:
        W, y = data
        if loss is None:
            _warn_binary_labels(y)
        return Problem(W, y, loss if loss is not None else "squares", x_true)
    raise TypeError(
        "data must be a rgrasp_viz Problem or a (W, y) tuple/list of a design matrix "
        f"and a response vector; got {type(data).__name__}"
        + (f" of length {len(data)}" if isinstance(data, (tuple, list)) else "")
    )


def _warn_binary_labels(y):
    """A :class:`~rgrasp_viz.exceptions.DataWarning` when raw targets are all 0 or 1 (both
    present) and
    no loss was named: they get least squares, which is rarely what 0/1 labels mean."""
    try:
        y = np.asarray(y)
        binary = (y.ndim == 1 and y.dtype.kind in "biuf" and y.size > 1
                  and bool(np.all((y == 0) | (y == 1))) and 0 < int(np.sum(y == 1)) < y.size)
    except (TypeError, ValueError):
        return
    if binary:
        warnings.warn(
            "y holds only 0/1 labels and no loss was given: fitting least squares; pass "
            "loss='logistic' to classify (or use rgrasp_viz.SparseLogisticRegression), or "
            "loss='squares' to silence this warning", DataWarning, stacklevel=4)


# ---------------------------------------------------------------------- generators

# Section 5.2 of the paper, plus a small preset that runs instantly in a classroom.
_SETTINGS = {
    "classroom": {"n": 500, "d": 1000, "s_star": 20, "correlation": 0.0},
    1: {"n": 2500, "d": 5000, "s_star": 250, "correlation": 0.0},
    2: {"n": 5000, "d": 10000, "s_star": 500, "correlation": 0.1},
}
_SETTING_NAMES = {"classroom": "classroom", 1: "setting1", 2: "setting2"}
_ALIASES = {"setting1": 1, "setting2": 2}


def _positive_int(value, argname):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{argname} must be a positive integer, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{argname} must be a positive integer, got {value!r}") from None
    if value < 1:
        raise ValueError(f"{argname} must be a positive integer, got {value}")
    return value


def _real(value, argname):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{argname} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{argname} must be finite, got {value}")
    return value


def _check_common(n, d, s_star, correlation, sparse_density):
    n = _positive_int(n, "n")
    d = _positive_int(d, "d")
    s_star = _positive_int(s_star, "s_star")
    if s_star > d:
        raise ValueError(f"s_star must be <= d, got s_star={s_star} > d={d}")
    correlation = _real(correlation, "correlation")
    if not 0.0 <= correlation < 1.0:
        raise ValueError(f"correlation must satisfy 0 <= correlation < 1, got {correlation}")
    if sparse_density is not None:
        sparse_density = _real(sparse_density, "sparse_density")
        if not 0.0 < sparse_density <= 1.0:
            raise ValueError(f"sparse_density must be in (0, 1], got {sparse_density}")
        if correlation != 0.0:
            raise ValueError("correlation must be 0 when sparse_density is given")
    return n, d, s_star, correlation, sparse_density


def _rng(random_state):
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "random_state must be None, a non-negative int or a numpy.random.Generator; "
            f"got {random_state!r}"
        ) from exc


def _draw_design(rng, n, d, correlation, sparse_density):
    """Draw W -- always the first draw from `rng`.

    Dense rows are :math:`w = \\sqrt{1-\\rho}\\, z + \\sqrt{\\rho}\\, u \\mathbf{1}` with
    :math:`z \\sim N(0, I_d)` and a scalar :math:`u \\sim N(0, 1)` per row, whose
    covariance is exactly :math:`(1-\\rho) I + \\rho \\mathbf{1}\\mathbf{1}^T` -- unit
    diagonal, :math:`\\rho` off the diagonal -- without a d x d Cholesky factor.
    """
    if sparse_density is None:
        W = rng.standard_normal((n, d))  # z, row by row
        u = rng.standard_normal(n)  # drawn even for rho = 0: the stream never depends on rho
        if correlation > 0.0:
            W *= np.sqrt(1.0 - correlation)
            W += np.sqrt(correlation) * u[:, None]
        return W
    # Sparse: a uniformly random set of positions, N(0, 1) values scaled by
    # 1/sqrt(density) so every entry (hence column) still has unit variance.
    total = n * d
    nnz = min(total, max(1, int(round(sparse_density * total))))
    flat = np.sort(rng.choice(total, size=nnz, replace=False))  # positions
    data = rng.standard_normal(nnz) / np.sqrt(sparse_density)  # then values
    rows, cols = np.divmod(flat, d)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    # Sorted flat positions give row-major order with sorted columns: canonical CSR.
    return sp.csr_matrix((data, cols, indptr), shape=(n, d))


def _draw_truth(rng, d, s_star, signal):
    # Fixed order after W: support, then values.
    support = rng.choice(d, size=s_star, replace=False)
    values = rng.uniform(-signal, signal, size=s_star)
    x_star = np.zeros(d)
    x_star[support] = values
    return x_star


def make_regression(
    setting=None,
    *,
    n=None,
    d=None,
    s_star=None,
    correlation=None,
    noise_var=0.01,
    sparse_density=None,
    random_state=None,
):
    """Synthetic sparse linear regression data of Section 5.2 of the paper.

    Each row of :math:`W` is drawn from :math:`N(0, \\Sigma)`, :math:`x^*` is
    :math:`s^*`-sparse with nonzeros uniform on [-1, 1] at a uniformly random support,
    and :math:`y = W x^* + \\epsilon` with :math:`\\epsilon \\sim N(0, \\sigma^2 I)`.

    Parameters
    ----------
    setting : {1, 2, "classroom"}, optional
        Preset sizes:

        * ``1`` -- n=2500, d=5000, s*=250, :math:`\\Sigma = I` (paper, setting 1);
        * ``2`` -- n=5000, d=10000, s*=500, :math:`\\Sigma` with unit diagonal and 0.1
          off the diagonal (paper, setting 2; W alone takes 400 MB);
        * ``"classroom"`` -- n=500, d=1000, s*=20, :math:`\\Sigma = I`; the default
          when neither `setting` nor `n`/`d` is given.

        The strings ``"setting1"``, ``"setting2"`` are aliases of 1 and 2.
    n, d, s_star : int, optional
        Samples, features and nonzeros of :math:`x^*`; override the preset. Without
        a preset, missing `n`/`d` come from ``"classroom"`` and `s_star` defaults to
        ``max(1, d // 20)`` (the paper's 5% ratio).
    correlation : float, optional
        Off-diagonal entry :math:`\\rho` of :math:`\\Sigma`, ``0 <= rho < 1``;
        overrides the preset (default 0).
    noise_var : float, default 0.01
        Noise variance :math:`\\sigma^2 \\ge 0` (0.01 in the paper).
    sparse_density : float in (0, 1], optional
        If given, W is instead a random CSR matrix with this fraction of nonzeros,
        drawn N(0, 1) and scaled by ``1/sqrt(sparse_density)`` so that columns keep
        unit variance. Requires ``correlation == 0``. Meant for exercising the sparse
        code path; it is not a setting of the paper.
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``; a Generator is used (and advanced)
        in place.

    Returns
    -------
    Problem
        ``loss="squares"``, ``x_true`` = :math:`x^*`, `name` ``"setting1"``,
        ``"setting2"``, ``"classroom"`` for an unmodified preset, otherwise
        ``"regression(n=..,d=..)"``.

    Notes
    -----
    All randomness comes from one generator, drawn in this fixed order so that equal
    `random_state` give bit-identical data:

    1. W -- dense: ``z`` of shape (n, d) then ``u`` of shape (n,) (``u`` is drawn even
       when :math:`\\rho = 0`); sparse: positions, then values;
    2. the support of :math:`x^*` (``choice(d, s_star, replace=False)``);
    3. its values (``uniform(-1, 1, s_star)``);
    4. the noise (``standard_normal(n) * sqrt(noise_var)``).

    Dense rows with correlation :math:`\\rho` are built as
    :math:`\\sqrt{1-\\rho}\\, z + \\sqrt{\\rho}\\, u \\mathbf{1}`, whose covariance is exactly
    :math:`(1-\\rho) I + \\rho \\mathbf{1}\\mathbf{1}^T`, avoiding an O(d^3) Cholesky.

    Examples
    --------
    >>> p = make_regression(random_state=0)
    >>> p.n, p.d, int((p.x_true != 0).sum())
    (500, 1000, 20)
    """
    if setting is None and n is None and d is None:
        setting = "classroom"
    if setting is not None:
        key = _ALIASES.get(setting, setting) if isinstance(setting, str) else setting
        if isinstance(key, (bool, np.bool_)) or key not in _SETTINGS:
            raise ValueError(f"setting must be 1, 2 or 'classroom', got {setting!r}")
        preset = _SETTINGS[key]
    else:
        key = None
        preset = dict(_SETTINGS["classroom"], s_star=None)
    n = preset["n"] if n is None else n
    d = _positive_int(preset["d"] if d is None else d, "d")
    if s_star is None:
        s_star = preset["s_star"] if preset["s_star"] is not None else max(1, d // 20)
    correlation = preset["correlation"] if correlation is None else correlation
    n, d, s_star, correlation, sparse_density = _check_common(
        n, d, s_star, correlation, sparse_density
    )
    noise_var = _real(noise_var, "noise_var")
    if noise_var < 0.0:
        raise ValueError(f"noise_var must be >= 0, got {noise_var}")

    rng = _rng(random_state)
    W = _draw_design(rng, n, d, correlation, sparse_density)
    x_star = _draw_truth(rng, d, s_star, 1.0)
    noise = rng.standard_normal(n) * np.sqrt(noise_var)  # last draw: noise
    y = np.asarray(W @ x_star).ravel() + noise

    unchanged = (
        key is not None
        and sparse_density is None
        and (n, d, s_star, correlation)
        == (preset["n"], preset["d"], preset["s_star"], preset["correlation"])
    )
    name = _SETTING_NAMES[key] if unchanged else f"regression(n={n},d={d})"
    return Problem(W, y, loss="squares", x_true=x_star, name=name)


def make_classification(
    *,
    n=500,
    d=1000,
    s_star=20,
    correlation=0.0,
    signal=1.0,
    sparse_density=None,
    random_state=None,
):
    """Synthetic sparse logistic regression data.

    W and :math:`x^*` are built exactly as in :func:`make_regression` (same order of
    draws), except that the nonzeros of :math:`x^*` are uniform on
    [-`signal`, `signal`]. Labels follow the logistic model:
    :math:`y_i = +1` with probability :math:`\\sigma(w_i^T x^*)`, else :math:`-1`.

    Parameters
    ----------
    n, d, s_star : int, default 500, 1000, 20
        Samples, features and nonzeros of :math:`x^*`.
    correlation : float, default 0.0
        Off-diagonal entry of the row covariance, ``0 <= correlation < 1``.
    signal : float, default 1.0
        Half-width (> 0) of the uniform distribution of the nonzeros of :math:`x^*`;
        larger values make the labels less noisy.
    sparse_density : float in (0, 1], optional
        Use a random CSR design instead, as in :func:`make_regression`.
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    Problem
        ``loss="logistic"``, labels in {-1, +1}, ``x_true`` = :math:`x^*`,
        `name` ``"classification(n=..,d=..)"``.

    Notes
    -----
    Order of draws: W, support, values (as in :func:`make_regression`), then ``n``
    uniforms ``v_i`` on [0, 1); :math:`y_i = +1` iff :math:`v_i < \\sigma(w_i^T x^*)`.
    """
    n, d, s_star, correlation, sparse_density = _check_common(
        n, d, s_star, correlation, sparse_density
    )
    signal = _real(signal, "signal")
    if signal <= 0.0:
        raise ValueError(f"signal must be > 0, got {signal}")

    rng = _rng(random_state)
    W = _draw_design(rng, n, d, correlation, sparse_density)
    x_star = _draw_truth(rng, d, s_star, signal)
    prob = expit(np.asarray(W @ x_star).ravel())
    y = np.where(rng.random(n) < prob, 1.0, -1.0)  # last draw: label uniforms
    return Problem(W, y, loss="logistic", x_true=x_star, name=f"classification(n={n},d={d})")
