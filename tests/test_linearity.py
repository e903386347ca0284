"""lecturekit.linearity re-exports Chapter 3's helpers from the modules they moved to."""

from __future__ import annotations

from lecturekit import datasets, heads, hessian_structure, kernel_change, linearity


def test_reexports_are_the_new_modules_functions():
    for module in (datasets, heads, hessian_structure, kernel_change):
        for name in module.__all__:
            if hasattr(linearity, name):
                assert getattr(linearity, name) is getattr(module, name), name
    assert linearity.norm_221 is hessian_structure.norm_221
    assert linearity.kernel_change_runs is kernel_change.kernel_change_runs
    assert linearity.head_ntk is heads.head_ntk
