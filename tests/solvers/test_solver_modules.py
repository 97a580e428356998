"""Each solver compiles, when it is built, exactly the Warp modules its step launches.

``SolverBase._load_step_modules`` compiles the modules of ``_step_kernels()`` in parallel in the
solver's constructor (a cold-start measure, docs/benchmarks.md). The list is written by hand next to
``step``; these tests run real steps of scenes that exercise every branch (cables, joints with
contacts, transmission tendons with couplings, both solvers), record the kernels each step launches,
and require the two module sets to be equal: a missing module would compile at the first step (or
during a graph capture), an extra one would cost compile time for nothing.
"""

import importlib

import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.demo import pendulum_chain


def _launched_modules(solver, steps) -> set[str]:
    """Names of the modules of every kernel ``steps()`` launches through ``wp.launch``."""
    seen = set()
    launch = wp.launch

    def recording(kernel, *args, **kwargs):
        seen.add(kernel.module.name)
        return launch(kernel, *args, **kwargs)

    wp.launch = recording
    try:
        steps()
    finally:
        wp.launch = launch
    return seen


def _declared_modules(solver) -> set[str]:
    return {k.module.name for k in solver._step_kernels()}


@pytest.mark.parametrize(
    "example",
    ["cable_pinhole", "cable_dynamic_roller", "transmission_suspended_load", "transmission_coupled_cables"],
)
def test_declared_modules_match_the_step_of_an_example(example, solver):
    """Cables (fixed and dynamic rollers) and transmission tendons with couplings, both solvers."""
    module = importlib.import_module(f"newton_tendon.examples.{example}")
    ex = module.Example(device="cpu", solver=solver)
    launched = _launched_modules(ex.solver, ex.simulate)
    assert launched == _declared_modules(ex.solver)


def test_declared_modules_match_the_step_of_a_chain_with_contacts(solver):
    """Joints and ground contacts through the collision pipeline (only the solver's launches count)."""
    b = nt.ModelBuilder()
    b.add_ground_plane()
    b.add_builder(pendulum_chain(links=2))
    if solver == "vbd":
        b.color()
    model = b.finalize(device="cpu")
    sim = (nt.solvers.SolverVBD if solver == "vbd" else nt.solvers.SolverXPBD)(model)
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    launched = _launched_modules(sim, lambda: sim.step(s0, s1, model.control(), contacts, 1.0 / 240.0))
    assert launched == _declared_modules(sim)


def test_a_model_without_bodies_loads_nothing(solver):
    """No bodies: ``step`` returns at once, and the constructor compiles no module."""
    model = nt.ModelBuilder().finalize(device="cpu")
    sim = (nt.solvers.SolverVBD if solver == "vbd" else nt.solvers.SolverXPBD)(model)
    assert sim._step_kernels() == []
    s0, s1 = model.state(), model.state()
    assert _launched_modules(sim, lambda: sim.step(s0, s1, None, None, 0.01)) == set()
