"""`make lab` serves the chapters as notebooks (JupyterLab on a loopback port, asked over HTTP).

The test starts `make lab` itself, in a process group of its own, on a free port of
127.0.0.1 with a random token, and stops that group (and only it) at the end.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 180


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    port, token = free_port(), secrets.token_hex(16)
    args = f"--no-browser --port={port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token={token}"
    log = open(ROOT / "_build" / "test-lab.log", "w") if (ROOT / "_build").is_dir() else subprocess.DEVNULL
    # a make of its own, not a sub-make of the `make test` that may be running this test
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def get(path: str):
        sep = "&" if "?" in path else "?"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}{sep}token={token}", timeout=30) as reply:
            body = reply.read()
            return json.loads(body) if reply.headers.get_content_type() == "application/json" else body.decode()

    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"`make lab` exited with status {proc.returncode} before serving")
            try:
                get("/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on port {port} within {START_TIMEOUT_S} s")
                time.sleep(1)
        yield get
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if log is not subprocess.DEVNULL:
            log.close()


def test_chapters_are_served_as_notebooks(lab):
    chapters = sorted(p.name for p in (ROOT / "chapters").glob("ch*.md"))
    assert chapters, "no chapters found"
    listing = {item["name"]: item for item in lab("/api/contents/?content=1")["content"]}
    for name in chapters:
        assert listing[name]["type"] == "notebook", (name, listing[name]["type"])
    # `make lab` made the paired notebooks: none newer than its source, which jupytext's
    # contents manager refuses to open (HTTP 400) when their texts differ
    newer = {name: (ROOT / "chapters" / name).with_suffix(".ipynb").stat().st_mtime
             - (ROOT / "chapters" / name).stat().st_mtime for name in chapters}
    assert all(delta <= 0 for delta in newer.values()), newer
    models = {name: lab(f"/api/contents/{name}") for name in chapters}
    assert all(m["type"] == "notebook" and m["format"] == "json" for m in models.values())
    model = models[chapters[0]]
    cells = model["content"]["cells"]
    assert any(c["cell_type"] == "code" for c in cells) and any(c["cell_type"] == "markdown" for c in cells)
    assert model["content"]["metadata"]["kernelspec"]["name"] == "python3"
    assert "notebook.setup()" in next(c["source"] for c in cells if c["cell_type"] == "code")


def test_markdown_opens_in_the_notebook_editor_by_default(lab):
    plugin = lab("/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    viewers = plugin["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers.get("markdown") == "Jupytext Notebook", viewers
    assert viewers.get("myst") == "Jupytext Notebook", viewers
    page = lab("/lab")
    assert "jupyterlab-jupytext" in page, "the Jupytext JupyterLab extension (the 'Jupytext Notebook' viewer) is not loaded"
