"""Hypervisor steal over a window, and waiting for a quiet host before a run."""

import pytest

from coexist.params import ParameterError
from coexist.testbed import steal


def _reader(values):
    it = iter(values)
    return lambda: {"steal_s": next(it)} if values else {}


def test_share_is_steal_over_all_cores_in_percent():
    clock = iter([100.0, 105.0])
    pct = steal.share(5.0, read=_reader([10.0, 10.5]), clock=lambda: next(clock),
                      sleep=lambda s: None, cores=2)
    assert pct == pytest.approx(100 * 0.5 / (2 * 5.0))  # 0.5 s stolen of 10 CPU-seconds


def test_share_is_none_where_proc_stat_cannot_tell():
    assert steal.share(1.0, read=_reader([]), sleep=lambda s: None) is None


def test_share_reads_this_machine():
    pct = steal.share(0.2)
    assert pct is None or 0.0 <= pct <= 100.0


def test_wait_stops_at_the_first_quiet_window():
    seen = []
    waited, pct = steal.wait_for_quiet(1.0, window_s=5.0, max_wait_s=60.0,
                                       measure=_seq([4.0, 1.5, 1.0, 9.0]),
                                       on_wait=lambda p, w: seen.append((p, w)))
    assert (waited, pct) == (10.0, 1.0)  # 1.0 is within the limit
    assert seen == [(4.0, 5.0), (1.5, 10.0)]


def test_wait_gives_up_after_the_longest_wait():
    waited, pct = steal.wait_for_quiet(0.5, window_s=5.0, max_wait_s=12.0,
                                       measure=_seq([3.0] * 10))
    assert (waited, pct) == (15.0, 3.0)  # windows are whole: the first past 12 s ends it


def test_wait_does_not_wait_without_a_measurement():
    assert steal.wait_for_quiet(1.0, measure=_seq([None])) == (0.0, None)


@pytest.mark.parametrize("kwargs, match", [
    ({"limit_pct": -1.0}, r"steal limit = -1.0 %; valid: 0-100"),
    ({"limit_pct": 101.0}, r"steal limit = 101.0 %"),
    ({"limit_pct": 1.0, "max_wait_s": -5.0}, r"max_wait_s = -5.0; valid: >= 0"),
])
def test_bad_limits_name_the_parameter(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        steal.wait_for_quiet(measure=_seq([0.0]), **kwargs)


def test_bad_window_names_the_parameter():
    with pytest.raises(ParameterError, match=r"window_s = 0; valid: > 0"):
        steal.share(0, sleep=lambda s: None)


def _seq(values):
    it = iter(values)
    return lambda window_s: next(it)
