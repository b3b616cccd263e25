"""LaTeX of the course's mathematics as plain Unicode text, for the places of the website
where MathJax does not run: the browser's tab title, the navigation, the search index and
the search results' summaries.

>>> plain_text(r"\\mathcal{H}_s")
'ℋₛ'
>>> plain_text(r"\\lVert \\hat x^{t-1} - \\hat b\\rVert_2")
'‖x̂ᵗ⁻¹ − b̂‖₂'

Only the notation the course uses is mapped; an unknown command keeps its name without the
backslash (``\\foo`` -> ``foo``), so the result never holds ``\\``, ``$``, ``{`` or ``}``.
"""

from __future__ import annotations

import re

__all__ = ["plain_text"]

_SCRIPT = {"B": "ℬ", "E": "ℰ", "F": "ℱ", "H": "ℋ", "I": "ℐ", "L": "ℒ", "M": "ℳ", "R": "ℛ"}
"""Script capitals of Unicode's Letterlike block (the rest are in Mathematical Alphanumerics)."""

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "eta": "η", "theta": "θ", "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ",
    "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "omega": "ω", "kappa": "κ",
    "xi": "ξ", "zeta": "ζ", "chi": "χ", "psi": "ψ",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ",
    "Omega": "Ω", "Pi": "Π", "Psi": "Ψ",
    "ell": "ℓ", "nabla": "∇", "partial": "∂", "infty": "∞", "sum": "∑", "prod": "∏",
    "ne": "≠", "neq": "≠", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ll": "≪",
    "gg": "≫", "approx": "≈", "sim": "∼", "equiv": "≡", "propto": "∝",
    "cup": "∪", "cap": "∩", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆",
    "setminus": "∖", "emptyset": "∅", "varnothing": "∅",
    "times": "×", "cdot": "·", "cdots": "⋯", "ldots": "…", "dots": "…", "pm": "±",
    "mp": "∓", "circ": "∘", "star": "⋆", "ast": "∗",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "mapsto": "↦",
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖", "lvert": "|", "rvert": "|",
    "vert": "|", "mid": "|", "langle": "⟨", "rangle": "⟩", "lceil": "⌈", "rceil": "⌉",
    "lfloor": "⌊", "rfloor": "⌋", "{": "{", "}": "}", "%": "%", "#": "#", "&": "&",
    "_": "_", "top": "ᵀ", "prime": "′", "\\": " ",
    "quad": " ", "qquad": "  ", ",": " ", ";": " ", ":": " ", "!": "", " ": " ",
    "left": "", "right": "", "big": "", "Big": "", "bigl": "", "bigr": "", "Bigl": "",
    "Bigr": "", "displaystyle": "", "limits": "", "nolimits": "",
    "min": "min", "max": "max", "arg": "arg", "log": "log", "exp": "exp", "sup": "sup",
    "inf": "inf", "lim": "lim",
}
_RELATIONS = {"ne", "neq", "le", "leq", "ge", "geq", "ll", "gg", "approx", "sim", "equiv",
              "propto", "in", "notin", "subset", "subseteq", "to", "rightarrow", "leftarrow",
              "Rightarrow", "mapsto"}
_ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "overline": "\u0305",
            "tilde": "\u0303", "widetilde": "\u0303", "dot": "\u0307", "vec": "\u20d7"}
_FONTS = {"mathrm", "mathbf", "mathit", "mathsf", "mathtt", "boldsymbol", "bm", "text",
          "textrm", "textbf", "textit", "operatorname", "mbox", "tag"}
_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvxβγρφχ−",
                "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ₋", strict=True))
_SUP = dict(zip("0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW*−′",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ*⁻′",
                strict=True))


def _script(letter):
    if letter in _SCRIPT:
        return _SCRIPT[letter]
    if "A" <= letter <= "Z":
        return chr(0x1D49C + ord(letter) - ord("A"))
    return letter


def _group(tex, i):
    """The argument starting at ``tex[i]`` (spaces skipped): ``(text, next index)``."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth, j = 1, i + 1
        while j < len(tex) and depth:
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            j += 1
        return tex[i + 1:j - 1], j
    if tex[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
        return m.group(0), i + len(m.group(0))
    return tex[i], i + 1


def _scripted(text, table, mark):
    """``text`` in sub/superscript characters, or ``mark(text)`` when one has none."""
    if all(c in table or c == " " for c in text):
        return "".join(table.get(c, "") for c in text)
    return f"{mark}({text})" if len(text) > 1 else f"{mark}{text}"


def plain_text(tex):
    """Plain Unicode text for the LaTeX ``tex`` (no delimiters, no ``$``, no backslashes).

    Parameters
    ----------
    tex : str
        Mathematics as written between ``$...$`` (delimiters ``$``, ``\\(``, ``\\[`` are
        removed as well).

    Returns
    -------
    str
    """
    tex = tex.strip()
    for a, b in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if tex.startswith(a) and tex.endswith(b) and len(tex) >= len(a) + len(b):
            tex = tex[len(a):len(tex) - len(b)]
            break
    out, i = [], 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name = m.group(1) if m else ""
            i += len(m.group(0)) if m else 1
            if name.isalpha():  # spaces after a control word are not text
                while i < len(tex) and tex[i] == " ":
                    i += 1
            if name == "mathcal" or name == "mathscr":
                arg, i = _group(tex, i)
                out.append("".join(_script(ch) for ch in plain_text(arg)))
            elif name in _ACCENTS:
                arg, i = _group(tex, i)
                inner = plain_text(arg)
                out.append(inner + _ACCENTS[name] if len(inner) == 1 else inner)
            elif name in _FONTS:
                arg, i = _group(tex, i)
                text = plain_text(arg) if name not in ("text", "textrm", "mbox") else arg
                out.append(f"({text})" if name == "tag" else text)
            elif name in ("frac", "dfrac", "tfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                num, den = plain_text(num), plain_text(den)
                num = num if len(num) <= 1 or num.isdigit() else f"({num})"
                den = den if len(den) <= 1 or den.isdigit() else f"({den})"
                out.append(f"{num}/{den}")
            elif name == "sqrt":
                arg, i = _group(tex, i)
                out.append(f"√({plain_text(arg)})")
            elif name in ("begin", "end"):
                _, i = _group(tex, i)
            elif name in _RELATIONS:
                out.append(f" {_SYMBOLS[name]} ")
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            else:
                out.append(name)
        elif c in "_^":
            arg, i = _group(tex, i + 1)
            text = plain_text(arg)
            out.append(_scripted(text, _SUB if c == "_" else _SUP, c))
        elif c in "{}":
            i += 1
        elif c == "-":
            out.append("−")
            i += 1
        elif c == "~":
            out.append(" ")
            i += 1
        elif c == "&":
            i += 1
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    text = re.sub(r" {2,}", " ", text)
    return text.strip()
