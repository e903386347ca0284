"""Every chapter gives the same text outputs each time it is executed (`make test-determinism`).

The first execution is the one `make test-notebooks` (nbval) stored in the book's
jupyter-cache; this test executes each chapter once more in a fresh kernel and compares the
text of every output, cell by cell: printed streams (stdout and stderr, each joined into
one text at its first place in the cell, as nbval stores them: the chunks a kernel sends,
and where other outputs such as glued values fall between them, vary from run to run), and
the text/plain, text/html, text/markdown and text/latex parts of results and displays,
glued values included (the numbers the prose shows). Images and widget models are not compared (a
widget's model id is a fresh UUID by design), so this run does not render the figures to
PNG: an empty ``InlineBackend.figure_formats`` leaves a figure's display its text/plain
part (``<Figure size ... with N Axes>``, compared like any other), a tenth of a chapter's
CPU time less. The figures the book shows are those of the nbval run, which checks them
(``LECTUREKIT_AUDIT_FIGURES``). A chapter missing from the cache (nbval not run, or code
changed since) is executed twice here, both times without PNGs.

Two kernels run at a time: a chapter keeps about one core busy.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.determinism

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
BOOK_CACHE = ROOT / "_build" / ".jupyter_cache"
TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex")
GLUED = "application/papermill.record/"  # myst_nb.glue(..., display=False)
WORKERS = 2
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)


def chapter_sources() -> list[Path]:
    """The executable pages: MyST notebooks with a kernelspec (as the Makefile's CHAPTERS),
    found from their front matter (parsing every page at collection took seconds)."""
    return make_student.chapter_paths()


def text_outputs(nb: nbformat.NotebookNode) -> list[list[str]]:
    """Per code cell, the text of its outputs in order; each stream's chunks joined at the
    stream's first place (nbval's ``coalesce_streams``)."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts: list[str] = []
        streams: dict[str, int] = {}  # stream name -> its index in texts
        for out in cell.get("outputs", []):
            kind = out["output_type"]
            if kind == "stream":
                if out["name"] in streams:
                    texts[streams[out["name"]]] += out["text"]
                else:
                    streams[out["name"]] = len(texts)
                    texts.append(f"[{out['name']}]\n" + out["text"])
                continue
            if kind == "error":
                texts.append(f"[error] {out['ename']}: {out['evalue']}")
            else:  # a glued value's text is under the prefix GLUED (shown in the prose)
                data = out.get("data", {})
                for mime in [m for base in TEXT_MIMES for m in (base, GLUED + base) if m in data]:
                    value = data[mime]
                    texts.append(f"[{mime}]\n" + ("".join(value) if isinstance(value, list) else value))
        cells.append(texts)
    return cells


NO_PNG = "%config InlineBackend.figure_formats = set()"


def execute(source: Path) -> nbformat.NotebookNode:
    """Execute a chapter in a fresh kernel, figures displayed as text only (a first cell,
    removed from the result, sets the inline backend's formats before the chapter's first
    cell resolves the backend)."""
    nb = jupytext.read(source)
    nb.cells.insert(0, nbformat.v4.new_code_cell(NO_PNG))
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(CHAPTERS)}})
    client.execute()
    setup = nb.cells.pop(0)
    assert not setup.outputs, f"{source.stem}: {NO_PNG!r} printed {setup.outputs}"
    return nb


def first_execution(source: Path) -> nbformat.NotebookNode | None:
    """The outputs nbval stored for this chapter's current code, or None."""
    if not BOOK_CACHE.is_dir():
        return None
    from jupyter_cache import get_cache

    try:
        _, nb = get_cache(BOOK_CACHE).merge_match_into_notebook(jupytext.read(source))
    except KeyError:
        return None
    return nb


@pytest.fixture(scope="module")
def executions(request) -> dict[str, tuple[nbformat.NotebookNode, nbformat.NotebookNode]]:
    """Both executions of every selected chapter (all chapters run in one pool of kernels)."""
    assert os.environ.get("TQDM_DISABLE") == "1", "run with TQDM_DISABLE=1 (make test-determinism does)"
    selected = {item.callspec.params["stem"] for item in request.session.items
                if item.module is request.module and hasattr(item, "callspec")}
    sources = [s for s in chapter_sources() if s.stem in selected]
    firsts = {s.stem: first_execution(s) for s in sources}
    jobs = [s for s in sources] + [s for s in sources if firsts[s.stem] is None]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        runs = list(pool.map(execute, jobs))
    result: dict[str, list] = {s.stem: [] if firsts[s.stem] is None else [firsts[s.stem]] for s in sources}
    for source, nb in zip(jobs, runs):
        result[source.stem].append(nb)
    return {stem: (pair[0], pair[1]) for stem, pair in result.items()}


@pytest.mark.parametrize("stem", [p.stem for p in chapter_sources()])
def test_chapter_outputs_are_reproducible(stem, executions):
    first, second = (text_outputs(nb) for nb in executions[stem])
    assert len(first) == len(second), f"{stem}: {len(first)} vs {len(second)} code cells"
    differing = []
    for index, (a, b) in enumerate(zip(first, second)):
        if a != b:
            diff = difflib.unified_diff("\n".join(a).splitlines(), "\n".join(b).splitlines(), "first run",
                                        "second run", lineterm="", n=1)
            differing.append(f"code cell {index}:\n" + "\n".join(list(diff)[:40]))
    assert not differing, f"{stem}: text outputs differ between two executions\n" + "\n\n".join(differing)
