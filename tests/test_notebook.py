"""lecturekit.notebook: the first-cell setup and the chapters' progress bars."""

from __future__ import annotations

import pytest

from lecturekit import notebook


@pytest.mark.parametrize("value, disabled", [("1", True), ("true", True), ("0", False), ("", False), (None, False)])
def test_progress_bars_follow_tqdm_disable(monkeypatch, value, disabled):
    if value is None:
        monkeypatch.delenv("TQDM_DISABLE", raising=False)
    else:
        monkeypatch.setenv("TQDM_DISABLE", value)
    bar = notebook.tqdm(range(3), desc="test")
    assert bar.disable is disabled  # (before iterating: a finished bar closes and disables itself)
    assert list(bar) == [0, 1, 2]


def test_explicit_disable_wins(monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    bar = notebook.tqdm(range(2), disable=False)
    assert bar.disable is False
    bar.close()


def test_setup_rejects_non_bool():
    with pytest.raises(TypeError, match="float64"):
        notebook.setup(float64="yes")
