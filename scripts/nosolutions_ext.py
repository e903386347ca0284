"""Sphinx extension of the edition without solutions (`make book SOLUTIONS=0`).

Loaded only by the configuration that scripts/edition_config.py derives from _config.yml;
the normal build never loads it. It removes, from every page's document tree,

- every solution of sphinx-exercise: `{solution}` directives and the gated
  `{solution-start}` ... `{solution-end}` blocks, with everything between them (prose, code
  cells and their outputs), once sphinx-exercise has merged each gated block into one
  solution node;
- any code cell tagged `solution` that is not inside such a block.

Exercises, hints (the `{admonition} Hint N` dropdowns, which stand before the solution)
and the check cells (after `{solution-end}`) stay. The notebooks are executed exactly as
in the full edition: the cells are dropped from the document tree after execution, so the
build reuses the execution cache of `make book` and the check cells still find the names
the solutions define.

sphinx-exercise's own `hide_solutions` option is not used: it empties `{solution-start}`
but leaves the gated content (the solution's prose and code) in the page.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

LOGGER = logging.getLogger(__name__)
SOLUTION_TAG = "solution"


def _is_solution_cell(node: nodes.Node) -> bool:
    return (
        isinstance(node, nodes.container)
        and node.get("nb_element") == "cell_code"
        and SOLUTION_TAG in (node.get("cell_metadata") or {}).get("tags", [])
    )


class RemoveSolutions(SphinxTransform):
    """Drop solution nodes and solution-tagged code cells from the document."""

    # sphinx-exercise merges gated solutions at priority 10 (MergeGatedSolutions).
    default_priority = 11

    def apply(self) -> None:
        removed = 0
        for node in list(self.document.findall(solution_node)):  # gated ones are merged by now
            node.parent.remove(node)
            removed += 1
        for node in list(self.document.findall(_is_solution_cell)):
            node.parent.remove(node)
            removed += 1
        leftovers = list(self.document.findall(lambda n: isinstance(n, (solution_start_node, solution_end_node))))
        for node in leftovers:
            LOGGER.warning(
                "unmatched %s left after merging gated solutions; removed",
                type(node).__name__,
                location=node,
            )
            node.parent.remove(node)
        if removed:
            LOGGER.verbose("%s: %d solution(s) removed", self.env.docname, removed)


def drop_source_downloads(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Remove the theme's "download source" and ".ipynb" buttons: with `html_copy_source`
    off there is no `_sources/` copy to download (and it would hold the solutions)."""
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"] = [
                button for button in group["buttons"]
                if button.get("label") not in {"download-source-button", "download-notebook-button"}
            ]


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx_exercise")
    # the digest of this file, set by scripts/edition_config.py: a changed extension changes
    # the configuration, so Sphinx reads and writes every page again
    app.add_config_value("nosolutions_digest", "", "env")
    app.add_transform(RemoveSolutions)
    # sphinx-book-theme adds its header buttons at priority 501
    app.connect("html-page-context", drop_source_downloads, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
