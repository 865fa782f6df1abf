"""What testing one of the paper's statements gives, shared by the aggregate-metric and the
trace statements: a :class:`Statement` (what the paper says, the reading of it that is
tested, and the test) and the :class:`Verdict` a test returns on a table of measured runs or
of the model's (whether the statement holds there, or why it cannot be tested, with the
numbers that decide it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: how a verdict is written, by whether it holds (None: not testable)
WORDS = {True: "holds", False: "does not hold", None: "not testable"}


@dataclass(frozen=True)
class Verdict:
    holds: bool | None  # None: the table lacks what the test needs
    evidence: str       # the numbers that decide it, or what is missing

    def text(self) -> str:
        return f"{WORDS[self.holds]}: {self.evidence}"


@dataclass(frozen=True)
class Statement:
    figure: str
    short: str    # a few words that name it in a sentence
    says: str     # the paper's statement, in brief
    reading: str  # what is tested
    test: Callable[..., Verdict]  # the table (and what else a kind of table needs)
    both: bool = False  # the reading covers drop-tail and RED: a table without RED
    #                     tests it on drop-tail only, and its verdict says so
    model_only: bool = False  # the paper finds it in its model, not in its experiments


def missing(what: str) -> Verdict:
    """The verdict on a statement that a table cannot test: ``what`` it lacks."""
    return Verdict(None, what)
