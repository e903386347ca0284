"""No measured number is typed by hand: the prose shows it through myst-nb's glue.

A number that a cell computes (a slope, an error, a count of seconds) must reach the text
through ``glue("name", value, display=False)`` in that cell and the role
``{glue:text}`name:.3f``` in the prose or a caption, so that the text and the output
cannot drift apart. This test reads every page's markdown cells and figure captions and
fails on a decimal number (``0.518``, ``2.5``, ``1.7e-3``) that is not glued,
unless the page lists it in tests/typed_numbers/<page>.txt with the reason it is typed on
purpose: an exact constant of the theory, a parameter the experiment sets, or a number
quoted from a source (tests/typed_numbers/README.md).

Not decimals, hence not checked: integers (sizes, seeds, counts set by the code), section,
figure, exercise and equation numbers ("§2.4", "Figure 9.3", "(3.2)"), version numbers
("0.10.1"), and anything in code, in a role's target or in a link.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "chapters").glob("*.md"))
TYPED_DIR = Path(__file__).resolve().parent / "typed_numbers"

_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.M | re.S)
_DIRECTIVE_OPTIONS = re.compile(r"^:[\w-]+:.*$", re.M)  # :label: ..., :class: ...
_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")  # {glue:text}`...`, {ref}`...`, {cite}`...`
_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_LABEL = re.compile(r"^\([\w.-]+\)=\s*$", re.M)
_HEADING_NUMBER = re.compile(r"^(#+)\s+\d+(\.\d+)*", re.M)
_REFERENCE = re.compile(
    r"(§|Sections?|Figures?|Fig\.|Exercises?|Chapters?|Tables?|Theorems?|Lemmas?|Eqs?\.|"
    r"Equations?|Propositions?|Corollary|Definitions?|Remarks?|Appendix|entry|entries|erratum)"
    r"\s*\d+(\.\d+)*([,–-]\s*\d+(\.\d+)*)*", re.I)
_EQUATION_NUMBER = re.compile(r"\(\d+\.\d+\)")
_VERSION = re.compile(r"\d+\.\d+\.\d+(\.\d+)*")
_TEX_COMMAND = re.compile(r"\\[A-Za-z]+")  # \approx1.6 is 1.6
DECIMAL = re.compile(r"(?<![\w.])\d*\.\d+(?:e[-+]?\d+)?(?!\d|\.\d)")


def typed_on_purpose(stem: str) -> dict[str, str]:
    """{number: reason} from tests/typed_numbers/<stem>.txt (empty if there is none)."""
    path = TYPED_DIR / f"{stem}.txt"
    if not path.is_file():
        return {}
    allowed = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            number, _, reason = line.strip().partition(" ")
            assert number not in allowed, f"{path.name}: {number} listed twice"
            allowed[number] = reason.strip()
    return allowed


def prose(page: Path) -> list[str]:
    """The markdown cells and the figure captions of a page (front matter excluded)."""
    texts = []
    for cell in jupytext.read(page).cells:
        if cell.cell_type == "markdown":
            texts.append(cell.source)
        caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            texts.append(caption)
    return texts


def typed_decimals(text: str) -> list[str]:
    """The decimal numbers of `text` outside code, roles, links, labels and references."""
    for pattern in (_FENCE, _DIRECTIVE_OPTIONS, _ROLE, _CODE, _LINK_TARGET, _LABEL, _HEADING_NUMBER,
                    _REFERENCE, _EQUATION_NUMBER, _VERSION, _TEX_COMMAND):
        text = pattern.sub(" ", text)
    return DECIMAL.findall(text)


def test_the_scanner_finds_typed_numbers_and_skips_the_rest():
    text = ("The slope is 0.518. And .25 of runs; measured 1.7e-3. See §2.4, Figure 9.3 and "
            "Exercise 5.6, eq. (3.2), JAX 0.10.1, `lr = 0.05`, {glue:text}`ch01-slope:.3f`, "
            "[link](https://x.org/1.5), {ref}`sec-1.2`.\n## 1.5 Title\n(sec-2.1)=\n"
            "```{code-cell} ipython3\nx = 2.5\n```\n$K^* = 0.570$, $c\\approx1.6$, $25.67n$")
    assert typed_decimals(text) == ["0.518", ".25", "1.7e-3", "0.570", "1.6", "25.67"]


# Pages not yet converted to glued numbers (issue #27): expected to fail, strictly, so that a
# page leaves this set the moment it passes. The set must end empty.
NOT_YET_GLUED: set[str] = set()


@pytest.mark.parametrize("page", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="not yet converted (#27)"))
    if p.stem in NOT_YET_GLUED else p for p in PAGES], ids=lambda p: p.stem)
def test_measured_numbers_are_glued(page):
    allowed = typed_on_purpose(page.stem)
    found: dict[str, int] = {}
    for text in prose(page):
        for number in typed_decimals(text):
            found[number] = found.get(number, 0) + 1
    typed = sorted(set(found) - set(allowed), key=float)
    assert not typed, (
        f"{page.name}: decimal numbers typed in the prose or captions: {typed}. Glue each "
        f"measured one from the cell that computes it (glue(name, value, display=False) and "
        f"{{glue:text}}`name:.3f`), or list it in tests/typed_numbers/{page.stem}.txt with "
        f"its reason.")
    stale = sorted(set(allowed) - set(found))
    assert not stale, f"tests/typed_numbers/{page.stem}.txt lists numbers the page no longer has: {stale}"


def test_every_typed_number_has_a_reason():
    stems = {page.stem for page in PAGES}
    for path in TYPED_DIR.glob("*.txt"):
        assert path.stem in stems, f"{path.name}: no page chapters/{path.stem}.md"
        for number, reason in typed_on_purpose(path.stem).items():
            assert DECIMAL.fullmatch(number), (path.name, number)
            assert len(reason.split()) >= 4, f"{path.name}: {number}: say why it is typed ({reason!r})"
