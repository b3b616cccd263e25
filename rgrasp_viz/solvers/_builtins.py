"""The built-in methods: one registry entry each (implementations in ``_methods.py``,
``_rgrasp.py`` and ``_subsolvers.py``).

Colours: Okabe-Ito (colour-blind safe); the paper's two methods in warm colours, the
baselines in cool ones.  Adding a built-in method is one implementation plus one entry here.
"""

from __future__ import annotations

from . import _methods as M
from ._registry import READINGS, MethodSpec, add
from ._rgrasp import framework
from ._subsolvers import Exact, SemiStochastic

_BOTH = tuple(READINGS)

BUILTINS = (
    MethodSpec("fght", "FG-HT", "#CC79A7", M.FGHT, eta_rule="gradient",
               aliases=("fg-ht", "iht"), max_iter=300,
               description="full gradient step, then H_s (deterministic)"),
    MethodSpec("grasp", "GraSP", "#009E73", framework(Exact), eta_rule=None, framework=True,
               description="Algorithm 1 with the sub-problem on T solved exactly"),
    MethodSpec("sght", "SG-HT", "#56B4E9", M.SGHT, eta_rule="sght", aliases=("sg-ht",),
               patience=8, stochastic=True, uses_batch=True,
               description="mini-batch stochastic gradient step, then H_s"),
    MethodSpec("svrght", "SVRGHT", "#0072B2", M.SVRGHT, eta_rule="svrght",
               aliases=("svrg-ht",), stochastic=True, epoch=True,
               description="SVRG epochs, H_s after every inner step"),
    MethodSpec("svrgsp", "SVRGSP", "#E69F00",
               framework(lambda m: SemiStochastic(m, plus=False)), eta_rule="svrgsp",
               max_iter=100, patience=4, stochastic=True, epoch=True, readings=_BOTH,
               framework=True,
               description="Algorithm 1 with Algorithm 2 (no thresholding inside an epoch)"),
    MethodSpec("svrgsp+", "SVRGSP+", "#D55E00",
               framework(lambda m: SemiStochastic(m, plus=True)), eta_rule="svrgsp",
               aliases=("svrgsp_plus", "svrgspplus", "svrgsp-plus"), max_iter=100,
               patience=4, stochastic=True, epoch=True, uses_m=True, readings=_BOTH,
               framework=True,
               description="Algorithm 1 with Algorithm 2 and m H_|T| cuts per epoch"),
    MethodSpec("htp", "HTP", "#999933", M.HTP, eta_rule="gradient", in_paper=False,
               description="hard thresholding pursuit: gradient step, H_s, exact fit on the "
                           "support"),
)
"""The built-in methods, in the order pickers and tables list them."""

for _spec in BUILTINS:
    add(_spec)
del _spec
