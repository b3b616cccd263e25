"""The claims table as HTML (rgrasp_viz.reproduce.claims_html, VerdictTable): one row per
claim, a badge per verdict coloured by kind, per-seed badges, and every text escaped."""

from __future__ import annotations

import re

from rgrasp_viz.reproduce import (
    CONTRADICTED,
    MIXED,
    NOT_SHOWN,
    SUPPORTED,
    TIE,
    VERDICTS,
    VerdictTable,
    claims_html,
    format_claims,
)
from rgrasp_viz.reproduce._verdict_table import BADGE_COLORS


def _rows():
    def seed(k, v, margin):
        return {"seed": k, "verdict": v, "margin": margin, "lean": None, "text": "",
                "numbers": {}}

    return [
        {"id": "P1", "claim": "SVRGSP faster than <b>SVRGHT</b>", "level": "speed gap <= 1e-4",
         "verdict": SUPPORTED, "agreement": "3/3", "lean": None, "text": "1.5x & more",
         "per_seed": [seed(0, SUPPORTED, 0.5), seed(1, SUPPORTED, 0.4),
                      seed(2, SUPPORTED, 0.6)]},
        {"id": "P2", "claim": "c", "level": "l", "verdict": MIXED, "agreement": "2/3",
         "lean": None, "text": "t", "per_seed": [seed(0, CONTRADICTED, -0.2),
                                                 seed(1, TIE, 0.01), seed(2, SUPPORTED, 0.3)]},
        {"id": "P3", "claim": "c", "level": "l", "verdict": NOT_SHOWN, "agreement": None,
         "lean": "leans towards the claim", "text": "t"},
    ]


def test_one_row_per_claim_with_a_coloured_badge_per_verdict():
    page = claims_html(_rows(), caption="setting 1")
    assert page.count("<tr>") == 1 + 3  # header and three claims
    main = re.findall(r'<tr><td[^>]*><b>(P\d)</b>.*?data-verdict="([^"]+)"', page)
    assert main == [("P1", SUPPORTED), ("P2", MIXED), ("P3", NOT_SHOWN)]
    for verdict in (SUPPORTED, MIXED, NOT_SHOWN):
        bg, fg = BADGE_COLORS[verdict]
        assert re.search(rf'data-verdict="{verdict}"[^>]*background:{bg};color:{fg}', page)
    assert set(BADGE_COLORS) == set(VERDICTS) and len(set(BADGE_COLORS.values())) == len(
        VERDICTS)  # every verdict its own colours
    # per-seed badges, with the seed and its margin as the tooltip
    assert 'title="seed 1: tie +1.0 %"' in page and 'title="seed 0: contradicted -20.0 %"' in page
    assert "2/3" in page and "leans towards the claim" in page
    assert "setting 1</caption>" in page


def test_text_reaches_the_page_as_text():
    page = claims_html(_rows(), caption="<script>x</script>")
    assert "<b>SVRGHT</b>" not in page and "&lt;b&gt;SVRGHT&lt;/b&gt;" in page
    assert "1.5x &amp; more" in page and "<script>" not in page


def test_the_display_object_is_html_in_jupyter_and_text_elsewhere():
    table = VerdictTable(_rows(), caption="setting 1")
    assert table._repr_html_() == claims_html(_rows(), "setting 1")
    assert repr(table) == "setting 1\n" + format_claims(_rows())


def test_margins_read_back_from_json_as_text_are_shown_or_left_blank():
    # run.json stores an infinite margin (only one side reached the target) as "inf"
    rows = [{"id": "A1", "claim": "x", "level": "speed gap <= 0.0001", "verdict": "mixed",
             "agreement": "3/5", "text": "t",
             "per_seed": [{"seed": 0, "verdict": "supported", "margin": "inf"},
                          {"seed": 1, "verdict": "contradicted", "margin": "-inf"},
                          {"seed": 2, "verdict": "supported", "margin": 0.25}]}]
    html = claims_html(rows)
    assert "seed 2: supported +25.0 %" in html
    assert "seed 0: supported\"" in html and "seed 1: contradicted\"" in html
