"""A README badge from the report dict: a shields-style SVG and a shields.io endpoint JSON.  Pure.

    MCP 2025-11-25 | MUST 100%

The message is the MUST score (under ``--strict`` the SHOULD score too), rounded *down*: one
MUST failure in five thousand shows 99.9%, never 100%.  The colour follows the score like
shields' coverage badges: 100% brightgreen, >= 95% green, >= 90% yellowgreen, >= 75% yellow,
>= 50% orange, below red; lightgrey when nothing was checked or the run was interrupted, red
when the target could not be reached.

Text widths come from a table of DejaVu Sans advance widths at 11 px (metrically close to the
Verdana shields uses; ``font-family`` names both), so the SVG needs no font at render time.
"""

from __future__ import annotations

from typing import Any, Mapping
from xml.sax.saxutils import escape

from conformance.report import summary as S

__all__ = ["badge_svg", "badge_endpoint", "badge_fields", "render_svg", "text_width", "color_for", "COLORS"]

# shields.io's named colours
COLORS = {
    "brightgreen": "#4c1",
    "green": "#97ca00",
    "yellowgreen": "#a4a61d",
    "yellow": "#dfb317",
    "orange": "#fe7d37",
    "red": "#e05d44",
    "lightgrey": "#9f9f9f",
    "blue": "#007ec6",
}
LABEL_COLOR = "#555"

# DejaVu Sans advance widths at 11 px (hmtx of DejaVuSans.ttf, unitsPerEm 2048), printable ASCII
_WIDTHS = {
    " ": 3.5, "!": 4.41, '"': 5.06, "#": 9.22, "$": 7.0, "%": 10.45, "&": 8.58, "'": 3.02, "(": 4.29, ")": 4.29,
    "*": 5.5, "+": 9.22, ",": 3.5, "-": 3.97, ".": 3.5, "/": 3.71, "0": 7.0, "1": 7.0, "2": 7.0, "3": 7.0,
    "4": 7.0, "5": 7.0, "6": 7.0, "7": 7.0, "8": 7.0, "9": 7.0, ":": 3.71, ";": 3.71, "<": 9.22, "=": 9.22,
    ">": 9.22, "?": 5.84, "@": 11.0, "A": 7.52, "B": 7.55, "C": 7.68, "D": 8.47, "E": 6.95, "F": 6.33,
    "G": 8.52, "H": 8.27, "I": 3.24, "J": 3.24, "K": 7.21, "L": 6.13, "M": 9.49, "N": 8.23, "O": 8.66,
    "P": 6.63, "Q": 8.66, "R": 7.64, "S": 6.98, "T": 6.72, "U": 8.05, "V": 7.52, "W": 10.88, "X": 7.54,
    "Y": 6.72, "Z": 7.54, "[": 4.29, "\\": 3.71, "]": 4.29, "^": 9.22, "_": 5.5, "`": 5.5, "a": 6.74,
    "b": 6.98, "c": 6.05, "d": 6.98, "e": 6.77, "f": 3.87, "g": 6.98, "h": 6.97, "i": 3.06, "j": 3.06,
    "k": 6.37, "l": 3.06, "m": 10.72, "n": 6.97, "o": 6.73, "p": 6.98, "q": 6.98, "r": 4.52, "s": 5.73,
    "t": 4.31, "u": 6.97, "v": 6.51, "w": 9.0, "x": 6.51, "y": 6.51, "z": 5.77, "{": 7.0, "|": 3.71,
    "}": 7.0, "~": 9.22, "·": 3.5, "…": 11.0, "–": 5.5, "—": 11.0,
}
_DEFAULT_WIDTH = 7.0  # other characters: about a digit
_PAD = 5  # horizontal padding on each side of a text


def text_width(text: str) -> float:
    """Width of ``text`` at 11 px in the badge font."""
    return round(sum(_WIDTHS.get(ch, _DEFAULT_WIDTH) for ch in text), 2)


def color_for(passed: int, checked: int) -> str:
    """The shields colour name for a score."""
    if not checked:
        return "lightgrey"
    if passed == checked:
        return "brightgreen"
    p = 100.0 * passed / checked
    if p >= 95:
        return "green"
    if p >= 90:
        return "yellowgreen"
    if p >= 75:
        return "yellow"
    if p >= 50:
        return "orange"
    return "red"


def _worse(a: str, b: str) -> str:
    rank = {"brightgreen": 0, "green": 1, "yellowgreen": 2, "yellow": 3, "orange": 4, "red": 5, "lightgrey": 6}
    return a if rank.get(a, 0) >= rank.get(b, 0) else b


def _label(report: Mapping[str, Any]) -> str:
    versions = list(report.get("versions") or [])
    mcp = "MCP client" if report.get("role") == "client" else "MCP"
    if not versions:
        return mcp
    if len(versions) == 1:
        return f"{mcp} {versions[0]}"
    return f"{mcp} {versions[0]}–{versions[-1]}"


def badge_fields(report: Mapping[str, Any], *, label: str | None = None) -> dict[str, str]:
    """``{"label", "message", "color"}`` (a shields colour name) for ``report``."""
    results = list(report.get("results") or [])
    label = label if label is not None else _label(report)
    verdict = S.verdict(report)
    if verdict == "unreachable":
        return {"label": label, "message": "unreachable", "color": "red"}
    if verdict == "interrupted":
        return {"label": label, "message": "incomplete", "color": "lightgrey"}
    must = S.score(results, "MUST")
    if not must["checked"]:
        return {"label": label, "message": "no MUST checked", "color": "lightgrey"}
    message = f"MUST {S.percent_text(must['passed'], must['checked'])}"
    color = color_for(must["passed"], must["checked"])
    if report.get("strict"):
        should = S.score(results, "SHOULD")
        if should["checked"]:
            message += f" · SHOULD {S.percent_text(should['passed'], should['checked'])}"
            color = _worse(color, color_for(should["passed"], should["checked"]))
    return {"label": label, "message": message, "color": color}


def badge_endpoint(report: Mapping[str, Any], *, label: str | None = None) -> dict[str, Any]:
    """The shields.io endpoint JSON (``https://img.shields.io/endpoint?url=...``)."""
    f = badge_fields(report, label=label)
    return {"schemaVersion": 1, "label": f["label"], "message": f["message"], "color": f["color"]}


def badge_svg(report: Mapping[str, Any], *, label: str | None = None) -> str:
    """A flat shields-style SVG badge for ``report``."""
    f = badge_fields(report, label=label)
    return render_svg(f["label"], f["message"], COLORS.get(f["color"], f["color"]))


def render_svg(label: str, message: str, color: str) -> str:
    lw = round(text_width(label) + 2 * _PAD)
    mw = round(text_width(message) + 2 * _PAD)
    width = lw + mw
    lx = lw * 5  # text x in the 10x scaled coordinate system, centred
    mx = (lw + mw / 2) * 10
    ltl = round(text_width(label) * 10)
    mtl = round(text_width(message) * 10)
    title = escape(f"{label}: {message}")
    lab = escape(label)
    msg = escape(message)
    col = escape(color, {'"': "&quot;"})
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">'
        f"<title>{title}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="{LABEL_COLOR}"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{col}"/><rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="110">'
        f'<text aria-hidden="true" x="{lx:g}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="{ltl}">{lab}</text>'
        f'<text x="{lx:g}" y="140" transform="scale(.1)" fill="#fff" textLength="{ltl}">{lab}</text>'
        f'<text aria-hidden="true" x="{mx:g}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="{mtl}">{msg}</text>'
        f'<text x="{mx:g}" y="140" transform="scale(.1)" fill="#fff" textLength="{mtl}">{msg}</text>'
        "</g></svg>\n"
    )
