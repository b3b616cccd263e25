"""The path over the sparsity level ``s`` of the ``...CV`` estimators."""

from __future__ import annotations

import numpy as np

from ._base import LEGEND, esc, figure, spec, tr

_LABELS = {"cv": "mean held-out loss (CV)", "bic": "BIC", "ebic": "EBIC"}


def path_figure_spec(path, s_chosen=None, title=None):
    """Plain-dict form of :func:`path_figure`.

    Parameters and meaning as for :func:`path_figure`.

    Returns
    -------
    dict
    """
    for key in ("s", "objective", "criterion"):
        if key not in path:
            raise ValueError(f"path must hold {key!r} (an estimator's path_), got keys "
                             f"{sorted(path)}")
    s = np.asarray(path["s"], dtype=np.int64)
    obj = np.asarray(path["objective"], dtype=np.float64)
    crit = np.asarray(path["criterion"], dtype=np.float64)
    if not len(s) == len(obj) == len(crit):
        raise ValueError(f"path's s, objective and criterion differ in length: "
                         f"{len(s)}, {len(obj)}, {len(crit)}")
    name = _LABELS.get(str(path.get("criterion_name", "")), "criterion")
    data = [
        tr("scatter", x=s.tolist(), y=obj.tolist(), mode="lines+markers",
           name="training objective", meta={"role": "objective"}),
        tr("scatter", x=s.tolist(), y=crit.tolist(), mode="lines+markers", name=esc(name),
           yaxis="y2", meta={"role": "criterion"}),
    ]
    shapes = []
    if s_chosen is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": int(s_chosen),
                       "x1": int(s_chosen), "y0": 0, "y1": 1,
                       "line": {"dash": "dot", "color": "#636EFA"}})
        data.append(tr("scatter", x=[int(s_chosen)],
                       y=[float(crit[s == int(s_chosen)][0])] if np.any(s == int(s_chosen))
                       else [None], mode="markers", yaxis="y2", name=f"chosen s = {int(s_chosen)}",
                       marker={"size": 12, "symbol": "star"}, meta={"role": "chosen"}))
    layout = {"title": {"text": esc(title or "The path over s")},
              "xaxis": {"title": {"text": "s (features selected)"}},
              "yaxis": {"title": {"text": "training objective"}},
              "yaxis2": {"title": {"text": esc(name)}, "overlaying": "y", "side": "right"},
              "legend": LEGEND, "shapes": shapes}
    return spec(data, layout)


def path_figure(path, s_chosen=None, title=None):
    """The training objective and the model-choice criterion along a path over ``s``.

    Parameters
    ----------
    path : dict
        An estimator's ``path_`` (:class:`rgrasp_viz._estimators.SparseLinearRegressionCV`):
        ``"s"``, ``"objective"``, ``"criterion"`` and optionally ``"criterion_name"``.
    s_chosen : int, optional
        The chosen ``s`` (marked).
    title : str, optional
        Figure title (shown as text).

    Returns
    -------
    plotly.graph_objects.Figure
        Two line traces (objective on the left axis, criterion on the right) and, with
        ``s_chosen``, a marker; traces carry ``meta["role"]``.
    """
    return figure(path_figure_spec(path, s_chosen, title))
