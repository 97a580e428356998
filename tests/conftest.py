"""Test configuration: every test runs on the devices named by NEWTON_TENDON_TEST_DEVICES (default: cpu)."""

import os

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
