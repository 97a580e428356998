"""Test configuration: every test runs on the devices named by NEWTON_TENDON_TEST_DEVICES (default: cpu)."""

import os
import sys

import pytest
import warp as wp

wp.config.quiet = True
wp.init()


def test_devices() -> list[str]:
    """Devices from NEWTON_TENDON_TEST_DEVICES (comma separated), default "cpu"."""
    names = [d.strip() for d in os.environ.get("NEWTON_TENDON_TEST_DEVICES", "cpu").split(",") if d.strip()]
    return names or ["cpu"]


test_devices.__test__ = False


@pytest.fixture(params=test_devices())
def device(request):
    """The Warp device a test runs on; parametrized over every configured device."""
    return request.param


SOLVER_NAMES = ("xpbd", "vbd")


@pytest.fixture(params=SOLVER_NAMES)
def solver(request):
    """Solver name ("xpbd" or "vbd") for tests that hold for both solvers."""
    return request.param


# Hypothesis profiles (tests/fuzz/test_fuzz_*.py). "ci" is loaded by default: few derandomized examples, so
# the suite is deterministic and bounded; select "long" with --hypothesis-profile=long (the pytest
# plugin loads it after this file, overriding the default).
from hypothesis import HealthCheck, Phase, settings  # noqa: E402

settings.register_profile(
    "ci",
    max_examples=40,
    derandomize=True,
    # No shrinking by default: one shrink of a stepped scene can take minutes; the first failing
    # example is printed as is (rerun with --hypothesis-profile=long to shrink it).
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "long",
    max_examples=400,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("ci")

# Hypothesis (6.13x and later) mixes numeric constants found in every imported local module into its
# generated data, so a derandomized run draws different examples whenever any source file changes
# (even one the fuzz tests never touch). The ci profile must give the same examples for the same
# tests, so it stops that discovery here: only the tests and their strategies decide the examples.
# The long profile keeps it (more varied data). Internal API, so guarded: if it moves, generation
# merely varies with the code again.
if not any(a.startswith("--hypothesis-profile") for a in sys.argv):
    try:
        from hypothesis.internal.conjecture import providers as _providers

        _providers._get_local_constants = lambda: _providers._local_constants
    except (ImportError, AttributeError):  # pragma: no cover
        pass
