"""Hypervisor steal over a window, and waiting for a quiet host before a run."""

import pytest

from coexist.core.params import ParameterError
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


def _series(step, steals):
    """(time, cumulative steal) samples every ``step`` seconds from per-step steal."""
    out, total = [(0.0, 0.0)], 0.0
    for i, s in enumerate(steals, 1):
        total += s
        out.append((i * step, total))
    return out


def _peak(samples, window_s, cores):
    """The busiest stretch's share of the CPU time, as a run stores it (%)."""
    return steal.peak_record(samples, cores=cores, window_s=window_s)["pct"]


def test_peak_finds_a_burst_the_run_average_hides():
    # 20 s sampled every 0.1 s on 2 cores; one burst of 60 ms of steal between 7.0 and 7.1 s
    steals = [0.0] * 200
    steals[70] = 0.06
    samples = _series(0.1, steals)
    mean = 100 * 0.06 / (2 * 20.0)
    assert mean == pytest.approx(0.15)                           # under 1 % over the run
    assert _peak(samples, 1.0, cores=2) == pytest.approx(100 * 0.06 / 2.0)  # 3 %
    # the window sets the dilution: over 2 s the same burst is 1.5 %
    assert _peak(samples, 2.0, cores=2) == pytest.approx(1.5)


def test_peak_of_steady_steal_is_its_mean():
    samples = _series(0.1, [0.002] * 50)                         # 2 ms each 0.1 s: 1 % of 2 cores
    assert _peak(samples, 1.0, cores=2) == pytest.approx(1.0)


def test_peak_of_a_span_shorter_than_the_window_is_over_the_span():
    samples = [(0.0, 1.0), (0.3, 1.03), (0.5, 1.05)]
    assert _peak(samples, 1.0, cores=1) == pytest.approx(10.0)
    assert steal.peak_record(samples[:1], window_s=1.0) is None
    assert steal.peak_record([], window_s=1.0) is None


def test_peak_rejects_bad_input():
    with pytest.raises(ParameterError, match=r"window_s = 0"):
        steal.peak_record([(0.0, 0.0), (1.0, 0.0)], window_s=0)
    with pytest.raises(ParameterError, match=r"samples: times must increase"):
        steal.peak_record([(0.0, 0.0), (1.0, 0.0), (1.0, 0.1)], window_s=0.5)


def test_watch_samples_until_stopped_and_once_more():
    import threading

    stop = threading.Event()
    reads = iter([1.0, 1.5, 2.0, 2.5])
    clock = iter([0.0, 0.1, 0.2, 0.3])
    waits = []

    class Stop:
        def wait(self, step):
            waits.append(step)
            return len(waits) == 3

    samples: list[tuple[float, float]] = []
    steal.watch(Stop(), samples, 0.1, read=lambda: {"steal_s": next(reads)},
                clock=lambda: next(clock))
    assert samples == [(0.0, 1.0), (0.1, 1.5), (0.2, 2.0), (0.3, 2.5)] and waits == [0.1] * 3
    steal.watch(stop, samples := [], read=dict)                  # /proc/stat cannot tell
    assert samples == []


def test_watch_reads_this_machine():
    import threading
    import time

    stop, samples = threading.Event(), []
    t = threading.Thread(target=steal.watch, args=(stop, samples, 0.02))
    t.start()
    time.sleep(0.2)
    stop.set()
    t.join(5)
    assert not t.is_alive() and len(samples) >= 3
    assert all(b[0] > a[0] and b[1] >= a[1] for a, b in zip(samples, samples[1:], strict=False))


def test_busiest_is_the_stolen_time_and_length_of_the_worst_stretch():
    steals = [0.0] * 50
    steals[20] = 0.01                                            # one 10-ms tick at 2.0-2.1 s
    stolen, span = steal.busiest(_series(0.1, steals), 1.0)
    assert stolen == pytest.approx(0.01) and span == pytest.approx(1.0)
    assert steal.busiest(_series(0.1, [0.0] * 50), 1.0)[0] == 0.0


def test_peak_record_is_what_a_run_stores():
    steals = [0.0] * 50
    steals[20] = 0.02
    rec = steal.peak_record(_series(0.1, steals), cores=2)
    assert rec == {"steal_s": 0.02, "span_s": 1.0, "pct": 1.0, "window_s": 1.0, "samples": 51}
    assert steal.peak_record([(0.0, 0.0)]) is None


def test_watch_drops_a_sample_that_does_not_move_the_clock_on():
    reads = iter([1.0, 1.5, 2.0])
    clock = iter([0.0, 0.0, 0.1])

    class Stop:
        n = 0

        def wait(self, step):
            self.n += 1
            return self.n == 2

    samples: list[tuple[float, float]] = []
    steal.watch(Stop(), samples, read=lambda: {"steal_s": next(reads)}, clock=lambda: next(clock))
    assert samples == [(0.0, 1.0), (0.1, 2.0)]
