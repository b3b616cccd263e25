"""Sphinx configuration of the course website (built by ``scripts/build_site.py``).

The site is the Jupyter Book 1 stack used directly: Sphinx, MyST-NB (notebooks, never
executed here: the committed outputs are shown) and the Sphinx Book Theme.  Everything a
page needs is served from the site itself: plotly.js (from the installed plotly package) and
MathJax 3 (from the npm registry) are copied into ``_static`` by the build script, and
MyST-NB is told to add no widget scripts (they come from CDNs).  ``scripts/build_site.py``
runs Sphinx with warnings as errors, so an output type that nothing renders fails the build
instead of leaving an empty box.
"""

import os
import sys

from docutils import nodes
from sphinx.transforms import SphinxTransform

import rgrasp_viz

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from latex_text import plain_text  # noqa: E402

project = "rgrasp_viz"
author = "rgrasp_viz developers"
copyright = "rgrasp_viz developers (BSD-3-Clause)"  # noqa: A001 - Sphinx's name
release = version = rgrasp_viz.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

# the notebooks are shown as committed (executed by scripts/execute_notebooks.py)
nb_execution_mode = "off"
# no require.js / widget-manager scripts from CDNs: dashboards carry a static text/html copy
nb_ipywidgets_js = {}
# the build script turns Plotly figures into text/html; a live widget view cannot be shown
# without a kernel (None removes the type), so its static copy (text/html) wins
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.plotly.v1+json", None),
]
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
# "$$ ... $$" inside a paragraph or a list item (notebook 3 writes the sub-problem (3) of
# Algorithm 1 that way, as JupyterLab renders it) is display math, not two empty "$"s
myst_dmath_double_inline = True
myst_heading_anchors = 3

# API reference from the numpydoc docstrings
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# MathJax 3 from the site itself (scripts/build_site.py copies it from the npm package)
mathjax_path = "mathjax/tex-chtml.js"

html_theme = "sphinx_book_theme"
html_title = "rgrasp_viz: see sparsity-constrained optimization happen"
html_static_path = ["_static"]
html_css_files = ["rgrasp.css"]
# plotly.js once for the whole site (draws every figure; no CDN); the search results'
# summaries show mathematics as plain text (rgrasp-search.js)
html_js_files = ["plotly.min.js", "rgrasp-search.js"]
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    "repository_url": "https://github.com/rgrasp-viz/rgrasp_viz",
    "repository_branch": "main",
    "path_to_docs": "",
    "use_repository_button": True,
    "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface":
                       "jupyterlab"},
    "show_toc_level": 2,
    "navigation_with_keys": False,
}

exclude_patterns = ["_build", "**.ipynb_checkpoints", "node_modules"]


def _even_underlines(app, what, name, obj, options, lines):
    """Lengthen RST section underlines that are shorter than their title (docutils warns,
    and the build treats warnings as errors; the text itself is unchanged)."""
    for i in range(1, len(lines)):
        title, rule = lines[i - 1], lines[i]
        if (rule and len(set(rule)) == 1 and rule[0] in "-=~^" and title.strip()
                and len(rule) < len(title) and not title.startswith(" ")):
            lines[i] = rule[0] * len(title)


class PlainTextTitles(SphinxTransform):
    """Mathematics in headings becomes plain Unicode text (``$\\mathcal{H}_s$`` -> ``ℋₛ``).

    Page titles come from the notebooks' headings and are shown where MathJax does not run:
    the browser's tab, the search index and results, the navigation of other pages.  Running
    before Sphinx collects the titles, this makes every one of them the same readable text.
    """

    default_priority = 400

    def apply(self, **kwargs):
        for title in self.document.findall(nodes.title):
            for math in list(title.findall(nodes.math)):
                math.replace_self(nodes.Text(plain_text(math.astext())))


def setup(app):
    app.add_transform(PlainTextTitles)
    app.connect("autodoc-process-docstring", _even_underlines)
    # MathJax on every page: the navigation shows notebook titles with mathematics on pages
    # that have none of their own (search, index)
    app.set_html_assets_policy("always")
