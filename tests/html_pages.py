"""The built book's HTML pages, each parsed once per test session.

The book tests read the same files many times: the edition without solutions is searched
page by page once per chapter, the figure checks walk every chapter page twice, the PDF
and API checks read them again. Parsing is most of their time, so the parsed tree, the
text and the loaded resources of a page are cached, keyed by the file and its
modification time (a page rebuilt during the session is parsed again). The trees are
shared: callers read them and must not modify them.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple


def _key(path: Path) -> tuple[Path, int]:
    return path, path.stat().st_mtime_ns


def soup(path: Path):
    """The BeautifulSoup tree of a page (Python's html.parser), read-only."""
    return _soup(*_key(path))


@functools.lru_cache(maxsize=32)
def _soup(path: Path, mtime_ns: int):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def links_by_target(tree) -> dict[str, list]:
    """The page's internal references (``a.reference.internal``) grouped by their href:
    one pass over the tree instead of one CSS search per target."""
    links = defaultdict(list)
    for anchor in tree.select("a.reference.internal[href]"):
        links[anchor["href"]].append(anchor)
    return dict(links)


class Texts(NamedTuple):
    everything: str  # all text outside scripts and styles
    prose: str  # the same without the cells' outputs


class _Text(HTMLParser):
    """The text of a page (no scripts or styles); `prose` also leaves out the cells'
    outputs, which may quote an exercise's check ("Correct: ...") in words of its
    solution."""

    def __init__(self) -> None:
        super().__init__()
        self.all: list[str] = []
        self.prose: list[str] = []
        self._skip = 0
        self._stack: list[bool] = []  # per open div: is it a cell's output?
        self._outputs = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        if tag == "div":
            is_output = "cell_output" in (dict(attrs).get("class") or "").split()
            self._stack.append(is_output)
            self._outputs += is_output

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1
        if tag == "div" and self._stack:
            self._outputs -= self._stack.pop()

    def handle_data(self, data):
        if not self._skip:
            self.all.append(data)
            if not self._outputs:
                self.prose.append(data)

    def result(self) -> Texts:
        return Texts("".join(self.all), "".join(self.prose))


def texts(path: Path) -> Texts:
    """(all text, text outside the cells' outputs) of a page."""
    return _parsed(_Text, *_key(path))


class Resources(NamedTuple):
    images: tuple[str, ...]  # the src of every <img>
    loaded: tuple[str, ...]  # scripts and stylesheets


class _Resources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.loaded: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "script" and attrs.get("src"):
            self.loaded.append(attrs["src"])
        if tag == "link" and attrs.get("href") and "stylesheet" in (attrs.get("rel") or ""):
            self.loaded.append(attrs["href"])

    def result(self) -> Resources:
        return Resources(tuple(self.images), tuple(self.loaded))


def resources(path: Path) -> Resources:
    """The URLs a page loads: its images, and its scripts and stylesheets."""
    return _parsed(_Resources, *_key(path))


@functools.lru_cache(maxsize=None)
def _parsed(parser_class: type, path: Path, mtime_ns: int):
    """What a parser (an HTMLParser with a ``result()``) finds in a page, cached."""
    parser = parser_class()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.result()
