"""Small scene and stepping helpers shared by the tests."""

from __future__ import annotations

import numpy as np
import warp as wp

import newton_tendon as nt
from newton_tendon.solvers import SolverVBD, SolverXPBD

SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}


class Sim:
    """A model, two states, a control, contacts and a solver ("xpbd" or "vbd"), stepped in place.

    For VBD the builder is coloured first (the solver needs body colours)."""

    def __init__(
        self,
        builder: nt.ModelBuilder,
        device,
        *,
        iterations: int = 8,
        contacts: bool = True,
        solver: str = "xpbd",
        **solver_kw,
    ):
        if solver == "vbd":
            builder.color()
        self.model = builder.finalize(device)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.solver = SOLVERS[solver](self.model, iterations=iterations, **solver_kw)
        self.pipeline = nt.CollisionPipeline(self.model) if contacts else None
        self.contacts = self.pipeline.contacts() if contacts else None

    def step(self, dt: float, n: int = 1):
        for _ in range(n):
            if self.pipeline is not None:
                self.pipeline.collide(self.state_0, self.contacts)
            self.solver.step(self.state_0, self.state_1, self.control, self.contacts, dt)
            self.state_0, self.state_1 = self.state_1, self.state_0

    def body_q(self) -> np.ndarray:
        return self.state_0.body_q.numpy().astype(np.float64)

    def body_qd(self) -> np.ndarray:
        return self.state_0.body_qd.numpy().astype(np.float64)

    def joint_q(self) -> tuple[np.ndarray, np.ndarray]:
        q, qd = nt.eval_joint_coordinates(self.model, self.state_0)
        return q.numpy().astype(np.float64), qd.numpy().astype(np.float64)


def quat_to_matrix(q) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def capture_steps(sim: Sim, dt: float, n: int):
    """Capture ``n`` steps (an even number, so the state buffers end where they started) as one graph."""
    assert n % 2 == 0
    with wp.ScopedCapture(device=sim.model.device) as cap:
        sim.step(dt, n)
    return cap.graph


def same(a, b) -> bool:
    """Deep equality of builder state: containers elementwise, numpy arrays with np.array_equal, same types."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, set):
        return a == b
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def simulate_with_contacts(model, steps: int, dt: float = 0.002, solver: str = "xpbd", control=None) -> np.ndarray:
    """``steps`` steps of ``dt`` [s] of ``model`` with the collision pipeline, from its initial state
    (XPBD, or VBD on a coloured model), with ``control`` (default: the model's); returns the final
    body poses [body_count, 7]."""
    sim = SOLVERS[solver](model)
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    control = model.control() if control is None else control
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        sim.step(s0, s1, control, contacts, dt)
        s0, s1 = s1, s0
    return s0.body_q.numpy()
