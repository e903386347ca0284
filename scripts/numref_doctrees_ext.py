"""Sphinx extension: a ``{numref}`` reads its target page's doctree once per build, not
once per reference.

To give a reference its number, Sphinx's standard domain (Sphinx 7.4,
``StandardDomain._resolve_numref_xref``) looks the target up in the target page's
doctree, which ``BuildEnvironment.get_doctree`` unpickles afresh on every call. A
chapter's doctree is a pickle of about half a megabyte (its notebook outputs included)
and takes about 50 ms to load, and the book has more than a hundred ``{numref}``s into
the chapters: loading the same few doctrees again and again was about a tenth of each
build's time (measured with cProfile: 131 loads, 9.7 s of an 83 s build).

Here the standard domain resolves numrefs through a view of the environment that keeps
the doctrees it has loaded, one per page. That lookup only reads the doctree (the
target's ids, its node type and its figure number, which comes from
``env.toc_fignumbers``), so sharing one copy between references changes no output; every
other reader of ``get_doctree`` (the writer, which transforms the doctree it gets) still
gets its own copy. The view lives as long as the domain object, that is one build.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.domains.std import StandardDomain


class _DoctreesKept:
    """The build environment, except that ``get_doctree`` returns the same (read-only)
    doctree for a page each time."""

    def __init__(self, env) -> None:
        self._env = env
        self._doctrees: dict = {}

    def __getattr__(self, name: str):
        return getattr(self._env, name)

    def get_doctree(self, docname: str):
        if docname not in self._doctrees:
            self._doctrees[docname] = self._env.get_doctree(docname)
        return self._doctrees[docname]


class StandardDomainKeepingDoctrees(StandardDomain):
    """Sphinx's standard domain; numrefs are resolved through :class:`_DoctreesKept`."""

    def _resolve_numref_xref(self, env, *args, **kwargs):
        kept = getattr(self, "_doctrees_kept", None)
        if kept is None or kept._env is not env:
            kept = self._doctrees_kept = _DoctreesKept(env)
        return super()._resolve_numref_xref(kept, *args, **kwargs)


def setup(app: Sphinx) -> dict:
    app.add_domain(StandardDomainKeepingDoctrees, override=True)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
