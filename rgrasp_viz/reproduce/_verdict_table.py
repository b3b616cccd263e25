"""The claims table as HTML, with a coloured badge per verdict (notebook 5 and the site).

:func:`~._claims.format_claims` gives the same table as text (terminal) or Markdown
(``claims.md``); in a notebook and on the course site that text is a wrapped block of monospace
type.  :func:`claims_html` draws it as a table whose verdicts are badges coloured by kind
(:data:`BADGE_COLORS`), with the per-seed verdicts as small badges; :class:`VerdictTable`
shows it in Jupyter (``_repr_html_``) and as text elsewhere.  Every text from the rows is
escaped: it reaches the page as text, never as HTML.  Styles are inline, so the table needs no
stylesheet (the site's static pages and nbconvert show it as is).
"""

from __future__ import annotations

import html
import math

from ._claims import CONTRADICTED, MIXED, NA, NOT_SHOWN, SUPPORTED, TIE, format_claims

__all__ = ["BADGE_COLORS", "VerdictTable", "claims_html"]

BADGE_COLORS = {
    SUPPORTED: ("#1a7f37", "white"),
    CONTRADICTED: ("#cf222e", "white"),
    MIXED: ("#bf8700", "white"),
    TIE: ("#6e7781", "white"),
    NOT_SHOWN: ("#ddf4ff", "#0550ae"),
    NA: ("#f6f8fa", "#57606a"),
}
"""Background and text colour of each verdict's badge: green supported, red contradicted,
amber mixed, grey tie, pale blue not shown within the budget, light grey n/a."""

_SHORT = {NOT_SHOWN: "not shown"}


def _esc(text):
    return html.escape(str(text), quote=True)


def _badge(verdict, small=False, title=None):
    bg, fg = BADGE_COLORS.get(verdict, ("#eaeef2", "#24292f"))
    size = "0.75em" if small else "0.85em"
    tip = f' title="{_esc(title)}"' if title else ""
    return (f'<span class="rgrasp-badge" data-verdict="{_esc(verdict)}"{tip} '
            f'style="display:inline-block;padding:0.1em 0.55em;border-radius:0.8em;'
            f'background:{bg};color:{fg};font-size:{size};font-weight:600;'
            f'white-space:nowrap">{_esc(_SHORT.get(verdict, verdict))}</span>')


def _pct(v):
    """A margin as a signed percentage; "" for none or an infinite one (only one side got
    there), also when it comes back from JSON as the text "inf" / "-inf"."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return ""
    return f"{100 * v:+.1f} %" if math.isfinite(v) else ""


def claims_html(rows, caption=None):
    """The claims table as an HTML ``<table>``.

    Parameters
    ----------
    rows : list of dict
        From :func:`~._claims.aggregate_claims` (over seeds: the agreement and the per-seed
        verdicts are shown) or :func:`~._claims.evaluate_claims` (one seed).
    caption : str, optional
        Shown above the table (escaped).

    Returns
    -------
    str
        One ``<tr>`` per claim: id, claim, target, the verdict as a badge (with the agreement
        and, when no side reached the target, the lean), the per-seed badges with their
        margins, and the numbers in words.  ``data-verdict`` on each badge names its verdict.
    """
    cell = 'style="text-align:left;vertical-align:top;padding:0.3em 0.6em"'
    head = "".join(f"<th {cell}>{h}</th>" for h in
                   ("id", "claim", "target", "verdict", "per seed", "numbers"))
    body = []
    for r in rows:
        verdict = _badge(r["verdict"])
        if r.get("agreement"):
            verdict += f' <span style="font-size:0.8em">{_esc(r["agreement"])}</span>'
        if r.get("lean"):
            verdict += f'<br><span style="font-size:0.8em">{_esc(r["lean"])}</span>'
        seeds = " ".join(
            _badge(p["verdict"], small=True,
                   title=f"seed {p['seed']}: {p['verdict']} {_pct(p.get('margin'))}".strip())
            for p in r.get("per_seed", []))
        body.append(f"<tr><td {cell}><b>{_esc(r['id'])}</b></td><td {cell}>"
                    f"{_esc(r['claim'])}</td><td {cell}>{_esc(r['level'])}</td>"
                    f"<td {cell}>{verdict}</td><td {cell}>{seeds}</td>"
                    f'<td {cell}><span style="font-size:0.85em">{_esc(r["text"])}</span>'
                    "</td></tr>")
    cap = (f'<caption style="caption-side:top;text-align:left;font-weight:600">'
           f"{_esc(caption)}</caption>" if caption else "")
    return ('<table class="rgrasp-verdicts" style="border-collapse:collapse;font-size:0.9em">'
            f"{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


class VerdictTable:
    """The claims table for display: HTML with badges in Jupyter, text in a terminal.

    Parameters
    ----------
    rows : list of dict
        Claims rows (:func:`claims_html`).
    caption : str, optional
    """

    def __init__(self, rows, caption=None):
        self.rows = list(rows)
        self.caption = caption

    def _repr_html_(self):
        return claims_html(self.rows, self.caption)

    def __repr__(self):
        head = f"{self.caption}\n" if self.caption else ""
        return head + format_claims(self.rows)
