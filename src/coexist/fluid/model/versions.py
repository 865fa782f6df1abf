"""The versions of the fluid model the book compares: the equations as published, and the
same with one or both of two Linux mechanisms switched on (:class:`.solve.Config`'s
``rtprop_expiry`` and ``cubic_recovery``, documented there).

A version is a named pair of those two switches, so a table or a figure keys its series by
:class:`Version` rather than by a bare pair of booleans; being a tuple, a version still
unpacks as ``(rtprop_expiry, cubic_recovery)`` and equals that pair as a mapping key.
"""

from __future__ import annotations

from typing import NamedTuple


class Version(NamedTuple):
    """One version of the fluid model: which Linux mechanisms it adds to the published
    equations."""

    rtprop_expiry: bool = False
    cubic_recovery: bool = False

    @property
    def name(self) -> str:
        """The version's name in tables and legends."""
        added = [text for on, text in ((self.rtprop_expiry, "RTprop expiring"),
                                       (self.cubic_recovery, "CUBIC recovery")) if on]
        return ", ".join(["fluid model", *added])

    @property
    def short(self) -> str:
        """The version's name where every series is the fluid model: ``as published``,
        ``RTprop expiring``, ``CUBIC recovery`` or ``both``."""
        if self.rtprop_expiry and self.cubic_recovery:
            return "both"
        return ("RTprop expiring" if self.rtprop_expiry else
                "CUBIC recovery" if self.cubic_recovery else "as published")

    @property
    def tag(self) -> str:
        """A short identifier for claim keys: ``published``, ``expiry``, ``recovery`` or
        ``expiry_recovery``."""
        added = [t for on, t in ((self.rtprop_expiry, "expiry"),
                                 (self.cubic_recovery, "recovery")) if on]
        return "_".join(added) or "published"

    def options(self) -> dict[str, bool]:
        """The :class:`.solve.Config` keywords that select this version."""
        return {"rtprop_expiry": self.rtprop_expiry, "cubic_recovery": self.cubic_recovery}


#: the equations as published (eq. 9 only ever lowers RTprop; CUBIC relaxes while losses
#: arrive)
PUBLISHED = Version(False, False)
#: with Linux BBR's RTprop filter expiring at each ProbeRTT entry
RTPROP_EXPIRY = Version(True, False)
#: with CUBIC cutting once per loss episode, as Linux's fast recovery does
CUBIC_RECOVERY = Version(False, True)
#: with both mechanisms
BOTH = Version(True, True)
#: every version, in the order the book lists them
VERSIONS = (PUBLISHED, RTPROP_EXPIRY, CUBIC_RECOVERY, BOTH)
#: the versions set beside measurements: as published, and with the RTprop expiry, the one
#: mechanism that brings the published model closer to the measurements on its own
#: (S-Options; CUBIC's recovery alone takes it further away)
SHOWN = (PUBLISHED, RTPROP_EXPIRY)
