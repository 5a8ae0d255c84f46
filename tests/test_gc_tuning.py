"""Garbage collection during runs: tuned while any run executes, restored after the last."""

import gc

import pytest

from stellar.gc_tuning import YOUNG_THRESHOLD, tuned_for_a_run


def test_overlapping_runs_restore_the_settings_after_the_last():
    before = gc.get_threshold()
    first, second = tuned_for_a_run(), tuned_for_a_run()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first run ends while the second still runs
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    assert gc.get_freeze_count() > 0
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_failing_run_restores_the_settings():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), tuned_for_a_run():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
