"""Launch buttons and the Binder environment (scripts/launch_config.py, binder/); no book build."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from jupyter_book.config import get_final_config
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
_spec = importlib.util.spec_from_file_location("launch_config", ROOT / "scripts" / "launch_config.py")
launch_config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(launch_config)

URL = "https://github.com/wide-nets/book"
PROVIDERS = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url")


@pytest.fixture(scope="module")
def base() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _theme_options(config_path: Path) -> dict:
    """The html_theme_options Jupyter Book passes to sphinx-book-theme for this configuration."""
    sphinx_config, _ = get_final_config(user_yaml=config_path, cli_config={"latex_individualpages": False},
                                        sourcedir=ROOT, raise_on_invalid=True)
    return sphinx_config["html_theme_options"]


def test_base_config_has_no_launch_buttons():
    # sphinx-book-theme adds launch buttons only when one of these is set (and otherwise would
    # point them at Jupyter Book's own default repository)
    options = _theme_options(ROOT / "_config.yml")
    assert not any(options["launch_buttons"].get(key) for key in PROVIDERS)
    assert not options["launch_buttons"].get("thebe")
    assert not options.get("use_repository_button")


def test_derived_config_sets_repository_and_binder(base):
    config = launch_config.launch_config(base, URL + ".git/", branch="published")
    assert config["repository"] == {"url": URL, "branch": "published", "path_to_book": ""}
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert config["launch_buttons"]["notebook_interface"] == "jupyterlab"
    assert config["launch_buttons"]["colab_url"] == ""          # no Colab button (see README)
    assert config["launch_buttons"]["thebe"] is False
    assert config["html"]["use_repository_button"] is True
    # everything else is the base configuration, and the base is left untouched
    changed = {("repository",), ("launch_buttons", "binderhub_url"), ("launch_buttons", "notebook_interface"),
               ("html", "use_repository_button"), ("sphinx", "local_extensions")}
    # our extensions' folders become absolute: Jupyter Book resolves them against the
    # derived file's folder (under _build/), not the book's
    assert config["sphinx"]["local_extensions"] == {
        name: str((ROOT / folder).resolve())
        for name, folder in base["sphinx"]["local_extensions"].items()}
    assert base["sphinx"]["local_extensions"] == {"chapter_numbers_ext": "scripts", "numref_doctrees_ext": "scripts"}
    for key, value in base.items():
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                if (key, sub) not in changed:
                    assert config[key][sub] == sub_value, (key, sub)
        else:
            assert config[key] == value, key
    assert base["launch_buttons"]["binderhub_url"] == "" and "repository" not in base


def test_cli_writes_a_config_jupyter_book_reads(tmp_path):
    out = tmp_path / "launch" / "_config.yml"
    assert launch_config.main(["--url", URL, "--out", str(out)]) == 0
    options = _theme_options(out)
    assert options["repository_url"] == URL and options["repository_branch"] == "main"
    assert options["path_to_docs"] == ""
    assert options["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert options["launch_buttons"]["notebook_interface"] == "jupyterlab"
    assert [key for key in PROVIDERS if options["launch_buttons"].get(key)] == ["binderhub_url"]
    assert options["use_repository_button"] is True


@pytest.mark.parametrize("url, canonical", [
    ("https://github.com/org/repo", "https://github.com/org/repo"),
    ("https://github.com/org/repo/", "https://github.com/org/repo"),
    ("https://github.com/org/repo.git", "https://github.com/org/repo"),
    ("https://gitlab.com/group/book", "https://gitlab.com/group/book"),
])
def test_repository_url_canonical_form(url, canonical):
    assert launch_config.repository_url(url) == canonical


@pytest.mark.parametrize("url", [
    "https://bitbucket.org/org/repo",         # no direct Binder links for this host
    "http://github.com/org/repo",
    "https://github.com/org",
    "https://github.com/org/repo/tree/main",
    "github.com/org/repo",
    "",
])
def test_repository_url_rejects(url):
    with pytest.raises(ValueError, match="url must be"):
        launch_config.repository_url(url)


def test_bad_arguments(base):
    with pytest.raises(TypeError, match="url"):
        launch_config.repository_url(None)
    with pytest.raises(ValueError, match="branch"):
        launch_config.launch_config(base, URL, branch="my branch")
    with pytest.raises(TypeError, match="base"):
        launch_config.launch_config(["not", "a", "dict"], URL)
    with pytest.raises(SystemExit):
        launch_config.main(["--url", "https://example.org/org/repo", "--out", os.devnull])


def test_binder_requirements_install_the_project_with_its_extras(pyproject):
    lines = [line.split("#", 1)[0].strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    lines = [line for line in lines if line]
    local = [line for line in lines if re.match(r"^(-e\s+)?\.(\[|$)", line)]
    assert len(local) == 1, lines                        # the repository itself, so pyproject's dependencies
    extras = set(Requirement("lecturekit" + local[0].split(".", 1)[1]).extras)
    optional = pyproject["project"]["optional-dependencies"]
    assert extras and extras <= set(optional), (extras, set(optional))
    installed = {canonicalize_name(Requirement(r).name)
                 for r in pyproject["project"]["dependencies"] + [r for e in extras for r in optional[e]]}
    # what a reader on Binder needs beyond lecturekit: JupyterLab opening .md files as notebooks, widgets
    assert {"jupyterlab", "jupytext", "ipywidgets"} <= installed, installed
    assert {"jax", "jaxlib"} <= installed
    assert lines == local, lines                          # nothing installed that pyproject does not declare


def test_python_versions_fit_the_pinned_jax(pyproject):
    jax_python = SpecifierSet(importlib.metadata.metadata("jax")["Requires-Python"])
    project_python = pyproject["project"]["requires-python"]
    minimum = re.fullmatch(r">=(3\.\d+)", project_python)
    assert minimum, project_python
    assert minimum.group(1) + ".0" in jax_python, (project_python, str(jax_python))   # no promise jax breaks
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
    version = runtime.removeprefix("python-") + ".0"
    assert version in SpecifierSet(project_python) and version in jax_python, runtime


def test_binder_post_build_and_make_lab_share_the_jupyterlab_settings():
    overrides = json.loads((BINDER / "jupyterlab-overrides.json").read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    script = post_build.read_text()
    assert script.startswith("#!/bin/bash") and "set -euo pipefail" in script
    assert "cp binder/jupyterlab-overrides.json" in script and "jupytext --to ipynb" in script
    lab_recipe = re.search(r"^lab:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), flags=re.M).group(1)
    assert "binder/jupyterlab-overrides.json" in lab_recipe
