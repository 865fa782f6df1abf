"""A signal that arrives while a run tears its testbed down must not cut the teardown short:
it is held until the teardown is done and then acted on (a campaign interrupted just as a
run stopped early once left that run's namespaces behind)."""

import os
import signal
import time

import pytest

from coexist.testbed import signals


def _teardown_hit_by(sig: int, done: list) -> None:
    """A stand-in teardown that is signalled halfway through."""
    os.kill(os.getpid(), sig)
    time.sleep(0.2)  # the signal is handled here, before the teardown's second half
    done.append("finished")


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler, whatever the process inherited (a shell starting it in
    the background hands it SIGINT ignored)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_sigint_during_teardown_is_held_until_it_is_done(sigint_raises):
    done: list = []
    with pytest.raises(KeyboardInterrupt):
        _teardown_hit_by(signal.SIGINT, done)  # unprotected: cut short
    assert done == []
    with pytest.raises(KeyboardInterrupt):
        with signals._signals_deferred():
            _teardown_hit_by(signal.SIGINT, done)
    assert done == ["finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_during_teardown_goes_to_the_handler_in_place_afterwards():
    def stop(signum, _frame):
        raise signals.Interrupted(f"stopped by signal {signal.Signals(signum).name}")

    old = signal.signal(signal.SIGTERM, stop)
    try:
        done: list = []
        with pytest.raises(signals.Interrupted, match="SIGTERM"):
            with signals._signals_deferred():
                _teardown_hit_by(signal.SIGTERM, done)
        assert done == ["finished"]
        assert signal.getsignal(signal.SIGTERM) is stop
        with signals._signals_deferred():  # no signal: nothing raised
            done.append("quiet")
        assert done == ["finished", "quiet"]
    finally:
        signal.signal(signal.SIGTERM, old)
