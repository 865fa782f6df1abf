import numpy as np
import pytest

from coexist.closed_form import ware
from coexist.core.params import ParameterError


def test_probe_time_eq4_hand_value():
    # q = 100 packets drained at 1000 packets/s, + 200 ms + 40 ms, 12 probes in 120 s
    assert ware.probe_time(100, 1000, 0.04, 120) == pytest.approx((0.1 + 0.2 + 0.04) * 12)


def test_eq3_limit_deep_buffer_gives_half():
    assert ware.cubic_fraction(1e9, 1, 1e12) == pytest.approx(0.5, abs=1e-8)


def test_eq2_assembled_by_hand():
    c_bps, rtt, x, d, pkt = 50e6, 0.04, 4.0, 120.0, 1500
    c = c_bps / (8 * pkt)
    q = x * c * rtt
    p = 0.5 - 1 / (2 * x) - 4 / q
    expected = (1 - p) * (d - (q / c + 0.2 + rtt) * d / 10) / d
    got = ware.bbr_share(x, capacity_bps=c_bps, rtt_s=rtt, duration_s=d, packet_bytes=pkt)
    assert float(got) == pytest.approx(expected, rel=1e-12)


def test_more_bbr_flows_more_probe_packets():
    one = ware.bbr_share(5.0, capacity_bps=100e6, rtt_s=0.04, n_bbr=1)
    ten = ware.bbr_share(5.0, capacity_bps=100e6, rtt_s=0.04, n_bbr=10)
    assert ten > one


def test_outside_unit_interval_is_an_error_or_nan_never_clipped():
    kwargs = dict(capacity_bps=100e6, rtt_s=0.04, n_bbr=10)
    with pytest.raises(ParameterError, match="leaves \\[0, 1\\]"):
        ware.bbr_share(1.05, **kwargs)
    out = ware.bbr_share(np.array([1.05, 5.0]), outside="nan", **kwargs)
    assert np.isnan(out[0]) and 0 < out[1] < 1
    with pytest.raises(ParameterError, match="'outside'"):
        ware.bbr_share(2.0, capacity_bps=1e6, rtt_s=0.1, outside="clip")


@pytest.mark.parametrize("bad", [{"rtt_s": 0}, {"capacity_bps": -1}, {"n_bbr": 0}])
def test_input_validation(bad):
    kwargs = dict(capacity_bps=50e6, rtt_s=0.04) | bad
    with pytest.raises(ParameterError, match=repr(next(iter(bad)))):
        ware.bbr_share(2.0, **kwargs)
