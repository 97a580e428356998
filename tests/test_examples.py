"""The examples run and reach their physical results (each example's own ``test_final``)."""

import importlib

import pytest

# (module, frames of 1/60 s): each count is the shortest run for which the example's test_final is
# meaningful (settled, swung across, or past the roller's return) and still inside its valid window.
EXAMPLES = [
    ("cable_hanging", 60),  # 1 s: the release oscillation has decayed below 0.2 % of the stretch
    ("cable_pinhole", 45),  # 0.75 s of uniform acceleration, before the light weight nears its pinhole
    ("cable_capstan", 40),  # 0.67 s: slipping machines well under way, the sticking one still at rest
    ("cable_routing_3d", 60),  # 1 s: the pendulum has swung across under the last roller
    ("cable_dynamic_roller", 126),  # 2.1 s: the roller has risen through the cable and gone back down
]


@pytest.mark.parametrize("name, frames", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example(name, frames, device):
    """Each example runs its frames on every test device and passes its own physics check."""
    module = importlib.import_module(f"examples.{name}")
    example = module.Example(device=device)
    for _ in range(frames):
        example.step()
    example.test_final()


@pytest.mark.parametrize("name", [e[0] for e in EXAMPLES])
def test_example_rejects_unknown_solver(name):
    """Only the XPBD solver drives the examples for now; anything else is refused up front."""
    module = importlib.import_module(f"examples.{name}")
    with pytest.raises(ValueError, match="solver"):
        module.Example(device="cpu", solver="vbd")


def test_example_worlds(device):
    """Replicated worlds reach the same result as one (the checks run over every world)."""
    from examples import cable_capstan

    example = cable_capstan.Example(device=device, world_count=2)
    assert example.world_count == 6
    for _ in range(40):
        example.step()
    example.test_final()
