"""The fluid model's versions: named pairs of the two Linux switches."""

from coexist.fluid import Config, Flow
from coexist.fluid.model import versions


def test_a_version_is_its_pair_of_switches_and_names_itself():
    assert versions.VERSIONS == ((False, False), (True, False), (False, True), (True, True))
    assert {versions.PUBLISHED: 1}[(False, False)] == 1  # a pair finds it as a key
    expiry, recovery = versions.RTPROP_EXPIRY
    assert (expiry, recovery) == (True, False)
    assert [v.name for v in versions.VERSIONS] == [
        "fluid model", "fluid model, RTprop expiring", "fluid model, CUBIC recovery",
        "fluid model, RTprop expiring, CUBIC recovery"]
    assert [v.short for v in versions.VERSIONS] == ["as published", "RTprop expiring",
                                                    "CUBIC recovery", "both"]
    assert [v.tag for v in versions.VERSIONS] == ["published", "expiry", "recovery",
                                                  "expiry_recovery"]
    assert versions.SHOWN == (versions.PUBLISHED, versions.RTPROP_EXPIRY)


def test_a_versions_options_select_it_in_a_configuration():
    flows = (Flow("cubic", 0.01, 0.01), Flow("bbr1", 0.01, 0.01))
    for v in versions.VERSIONS:
        cfg = Config(1000.0, 40.0, flows, **v.options())
        assert (cfg.rtprop_expiry, cfg.cubic_recovery) == v
