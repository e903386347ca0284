"""The API reference: every public name of lecturekit is documented, with an example.

The pages are written by scripts/api_reference.py (one per public module, from its
``__all__``); these tests check the package at the source level (fast, `make test-unit`):

* every public module has ``__all__``, and every name in it exists;
* every name in ``__all__`` has a docstring with an ``Example:`` section holding a doctest
  (``>>>``); a constant has a doc comment (``#:`` before, or a string after, it); the
  public methods and properties of a documented class have docstrings;
* every name in ``__all__`` appears on its module's page, and the API part of _toc.yml
  lists every module's page;
* every link of the book's pages to the reference ({py:func}`~lecturekit.nets.mlp`, ...)
  has an entry to land on (what the ``-n`` build checks, in a second).

The doctests themselves run under ``pytest --doctest-modules lecturekit`` (`make test-unit`).
The tests marked ``book`` read the built HTML (the ``book`` fixture of tests/conftest.py):
every name has its entry, with a signature, on its page.
"""

from __future__ import annotations

import importlib
import inspect
import io
import re
import sys
from pathlib import Path

import pytest

from html_pages import links_by_target, soup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import api_reference  # noqa: E402

MODULES = api_reference.public_modules()
# an Example(s): section whose indented body (a sentence may introduce it) holds a doctest
EXAMPLE = re.compile(r"^(Example|Examples):\s*$\n((\s*\n)|([ \t]+(?!>>> )\S.*\n))*[ \t]+>>> ", re.MULTILINE)


# The docstrings become reStructuredText (napoleon, then docutils) in the -W build, where
# markup that docutils cannot resolve fails the build: "|k - k'|" is an undefined
# substitution, "theta_-^2 - 1" a link to an unknown target "theta". Docutils alone reads each
# docstring here, in milliseconds; Sphinx's own roles and directives are unknown to it and
# are skipped (the -n build checks their targets).
_SPHINX_ONLY = ("Unknown interpreted text role", "Unknown directive type", "No role entry",
                "No directive entry")


def _rest_problems(doc: str) -> list[str]:
    """The warnings and errors docutils reports for a Google-style docstring."""
    from docutils.core import publish_doctree
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    stream = io.StringIO()
    publish_doctree(str(GoogleDocstring(doc, Config())),
                    settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream})
    messages = re.findall(r"^<string>:\d+: \((?:WARNING|ERROR|SEVERE)/\d\) (.*)$", stream.getvalue(),
                          flags=re.MULTILINE)
    return [m for m in messages if not m.startswith(_SPHINX_ONLY)]


def test_the_rest_checker():
    doc = ("Bound: |k - k'| <= 1, ``|x|``, :math:`|S|`, \\|u\\| and abs(x).\n\n"
           ">>> abs(-1)\n|1|\n\nnorm |v|, :math:`a +\n|b|`, :py:func:`f`.\n\n.. math::\n\n   |z|\n\n"
           "beta = theta_-^2 - 1, ``theta_-^2``.\n\nArgs:\n    x: a number.\n")
    assert _rest_problems(doc) == ['Undefined substitution referenced: "k - k\'".',
                                   'Undefined substitution referenced: "v".',
                                   'Unknown target name: "theta".'], _rest_problems(doc)


def _own_entries(module_name: str) -> list[api_reference.Entry]:
    """The names the page of ``module_name`` documents itself (re-exports are documented
    on the page of the module that defines them)."""
    return [e for e in api_reference.entries(module_name, set(MODULES)) if e.canonical == module_name]


def _public_members(cls: type) -> list[tuple[str, object]]:
    """Methods and properties that ``cls`` itself defines, without a leading underscore,
    other than the fields of a NamedTuple or dataclass (described in ``Attributes:``)."""
    fields = set(api_reference._fields(cls))
    return [(name, value) for name, value in vars(cls).items()
            if not name.startswith("_") and name not in fields
            and (inspect.isfunction(value) or isinstance(value, (property, staticmethod, classmethod)))]


@pytest.mark.parametrize("module_name", MODULES)
def test_module_has_all(module_name):
    module = importlib.import_module(module_name)
    try:
        names = api_reference.public_names(module)
    except api_reference.ApiError as err:
        pytest.fail(str(err))
    assert inspect.getdoc(module), f"{module_name} has no module docstring"
    # an empty __all__ is allowed: a module kept for its old name only (its page says where
    # the names went), or a package whose submodules hold everything
    assert isinstance(names, list)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_has_a_docstring_with_an_example(module_name):
    module = importlib.import_module(module_name)
    if getattr(module, "__all__", None) is None:
        pytest.fail(f"{module_name} has no __all__")
    problems = []
    for entry in _own_entries(module_name):
        if entry.kind == "data":
            if not api_reference.attribute_docs(module).get(entry.name):
                problems.append(f"{entry.name}: a constant without a doc comment (#: before it, "
                                "or a string literal after it)")
            continue
        obj = getattr(module, entry.name)
        doc = inspect.getdoc(obj) or ""
        if not doc.strip():
            problems.append(f"{entry.name}: no docstring")
            continue
        if not EXAMPLE.search(doc):
            problems.append(f"{entry.name}: no 'Example:' section with a doctest (>>>)")
        for message in _rest_problems(doc):
            problems.append(f"{entry.name}: {message} (reStructuredText: write abs(...), or put "
                            "formulas in ``double backticks``)")
        if entry.kind in ("class", "exception"):
            for name, member in _public_members(obj):
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if not (inspect.getdoc(target) or "").strip():
                    problems.append(f"{entry.name}.{name}: no docstring (autodoc would leave it out)")
    assert not problems, f"{module_name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_is_on_its_page(module_name):
    if getattr(importlib.import_module(module_name), "__all__", None) is None:
        pytest.fail(f"{module_name} has no __all__")
    page = api_reference.render_page(module_name, MODULES)
    missing = []
    for entry in api_reference.entries(module_name, set(MODULES)):
        if entry.canonical == module_name:
            if f".. auto{entry.kind}:: {entry.name}\n" not in page:
                missing.append(entry.name)
        elif not re.search(rf"^\.\. py:\w+:: {entry.name}\b.*\n\n   Documented in :mod:`{entry.canonical}`",
                           page, re.MULTILINE):
            missing.append(f"{entry.name} (entry linking to {entry.canonical})")
    assert not missing, f"names of {module_name}.__all__ not on its page: {missing}"


def test_toc_lists_every_module_page():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert toc.rstrip().endswith(api_reference.toc_part(MODULES).rstrip()), (
        "the API part of _toc.yml (its last part) does not list the public modules of "
        "lecturekit: run `make api` (python scripts/api_reference.py) and commit _toc.yml")


def test_generator_rejects_a_module_without_all():
    import types

    module = types.ModuleType("lecturekit.fake")
    module.f = lambda: None
    with pytest.raises(api_reference.ApiError, match="no __all__"):
        api_reference.public_names(module)
    module.__all__ = ["f", "g"]
    with pytest.raises(api_reference.ApiError, match=r"lacks: \['g'\]"):
        api_reference.public_names(module)


@pytest.mark.book
@pytest.mark.parametrize("module_name", MODULES)
def test_built_page_shows_every_name_with_its_signature(book, module_name):
    path = book / f"{api_reference.page_docname(module_name)}.html"
    assert path.is_file(), f"{path.relative_to(book)} was not built"
    tree = soup(path)
    targets = links_by_target(tree)
    problems = []
    for entry in api_reference.entries(module_name, set(MODULES)):
        target = f"{module_name}.{entry.name}"
        signature = tree.find(id=target)
        canonical = f"{entry.canonical}.{entry.name}"
        if entry.canonical != module_name and not any(href.endswith(f"#{canonical}") for href in targets):
            problems.append(f"{entry.name}: no link to {canonical}, where it is documented")
        if signature is None:
            problems.append(f"{entry.name}: no entry (id {target})")
        elif entry.kind in ("function", "class") and entry.name not in signature.get_text():
            problems.append(f"{entry.name}: the entry's signature does not show its name")
        elif entry.kind == "function" and "(" not in signature.get_text():
            problems.append(f"{entry.name}: the entry shows no signature")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


PY_ROLE = re.compile(r"\{py:(\w+)\}`(?:[^`<]*<)?~?([\w.]+)>?`")


def _reference_target_problem(role: str, target: str, modules: list[str]) -> str | None:
    """Why the API reference has no entry for ``target`` (None if it has one)."""
    if role == "mod":
        return None if target in modules else "no such public module"
    owner = max((m for m in modules if target.startswith(m + ".")), key=len, default=None)
    if owner is None:
        return "not in a public lecturekit module"
    first, *rest = target[len(owner) + 1:].split(".")
    module = importlib.import_module(owner)
    if first not in getattr(module, "__all__", ()):
        return f"{first!r} is not in {owner}.__all__"
    if not rest:
        return None
    entry = next(e for e in api_reference.entries(owner, set(modules)) if e.name == first)
    if entry.canonical != owner:
        return f"members are documented under {entry.canonical}.{first}"
    obj = getattr(module, first)
    for part in rest:
        if part in api_reference._fields(obj):
            return None  # described in the class's Attributes: section
        if part.startswith("_") or not hasattr(obj, part):
            return f"{type(obj).__name__} {first} has no public member {part!r}"
        obj = getattr(obj, part)
    return None if inspect.getdoc(obj) else "the member has no docstring (autodoc leaves it out)"


def test_chapter_links_to_the_reference_resolve():
    """Every {py:func}`~lecturekit...` (and :class:, :meth:, :mod:, ...) in the book's pages
    points to an entry of the API reference (a fast check of what the -n build checks)."""
    problems = []
    for page in sorted([*ROOT.glob("*.md"), *(ROOT / "chapters").glob("*.md")]):
        for match in PY_ROLE.finditer(page.read_text(encoding="utf-8")):
            role, target = match.groups()
            if not target.startswith("lecturekit"):
                continue
            problem = _reference_target_problem(role, target, MODULES)
            if problem:
                problems.append(f"{page.relative_to(ROOT)}: {match.group(0)}: {problem}")
    assert not problems, "\n".join(problems)


# The reference shows each example in a code box about 78 characters wide; a longer line
# scrolls sideways (the rule the chapters follow at 88 characters, in a wider column).
EXAMPLE_WIDTH = 78


def test_examples_fit_their_code_box():
    wide = []
    for path in sorted((ROOT / "lecturekit").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.strip()
            if code.startswith((">>> ", "... ")) and len(code) > EXAMPLE_WIDTH:
                wide.append(f"{path.relative_to(ROOT)}:{number} ({len(code)} characters)")
    assert not wide, (f"example lines wider than {EXAMPLE_WIDTH} characters (they scroll "
                      "sideways on the API pages):\n" + "\n".join(wide))
