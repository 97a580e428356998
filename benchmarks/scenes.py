"""Benchmark scenes as runnable cases, built the same way with ``newton_tendon`` and with ``newton``.

A *case* is one scene replicated into ``worlds`` worlds, finalized on a device, with a solver of
one kind (``"xpbd"`` or ``"vbd"``), two states and a control. ``case.step_pair()`` advances two
steps and ends on the starting state buffer (what a CUDA graph captures); ``case.answer()`` reads
the scene's physical observables from world 0 after the steps taken so far, and ``case.spread()``
the largest difference of any world from world 0 (all worlds start equal, so it is 0 when the
worlds are isolated).

Scenes (``ALL_SCENES``):

* ``pulley``, ``pinhole``, ``routing_3d``: routed cables (``bench_cables.py``), runnable with
  newton 1.8.0 too. Observables: the heavy weight's drop [m] and the span tension [N]
  (routing_3d: the weight's position [m] and the last span's tension [N]).
* ``chain``: a 4-link capsule pendulum chain on revolute hinges falling onto a ground plane,
  collision included in the step (``bench_rigid.py``), runnable with newton too. Observables:
  the tip link's position [m].
* ``tx_suspended``, ``tx_pulley``, ``tx_coupled``, ``tx_fixed``: transmission tendons
  (``bench_transmission.py``); newton has no equivalent, so they run with ours only. Observables:
  each tendon's length [m] and tension [N].

Analytic values (``ANALYTIC``) hold for the two Atwood scenes: acceleration ``a = g (m1 - m2) /
(m1 + m2)`` and tension ``T = 2 m1 m2 g / (m1 + m2)``.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import warp as wp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find the bench modules

import bench_cables  # noqa: E402

TRANSMISSION_NAMES = ("suspended", "pulley", "coupled", "fixed")
"""Scenes of ``bench_transmission.py`` (imported only when one runs: it imports newton_tendon)."""

CABLE_SCENES = ("pulley", "pinhole", "routing_3d")
"""Routed-cable scenes (newton can run them)."""
RIGID_SCENES = ("chain",)
"""Rigid scenes with ground contact (newton can run them)."""
TRANSMISSION_SCENES = tuple("tx_" + s for s in TRANSMISSION_NAMES)
"""Transmission-tendon scenes (ours only)."""
ALL_SCENES = CABLE_SCENES + RIGID_SCENES + TRANSMISSION_SCENES
PEER_SCENES = CABLE_SCENES + RIGID_SCENES
"""Scenes newton 1.8.0 can build."""

DEFAULT_DT = {**{s: 1.0 / 240.0 for s in CABLE_SCENES + RIGID_SCENES}, **{s: 1.0e-3 for s in TRANSMISSION_SCENES}}
"""Step [s] per scene: the values ``bench_cables``/``bench_rigid`` (1/240 s) and ``bench_transmission`` (1 ms) use."""

_G = 9.81
_M1, _M2 = 1.1, 1.0
ANALYTIC = {
    "pulley": {"accel": _G * (_M1 - _M2) / (_M1 + _M2), "tension": 2.0 * _M1 * _M2 * _G / (_M1 + _M2)},
    "pinhole": {"accel": _G * (_M1 - _M2) / (_M1 + _M2), "tension": 2.0 * _M1 * _M2 * _G / (_M1 + _M2)},
}
"""Ideal Atwood machine: acceleration [m/s^2] of the heavy weight and cable tension [N] (frictionless, massless)."""


def chain(api, links: int = 4, link_length: float = 0.4, radius: float = 0.05, height: float = 1.0):
    """The pendulum chain of ``newton_tendon.demo.pendulum_chain`` (capsules of density 1000 kg/m^3,
    mu 0.6, hinged about +Y, starting horizontal), written against either API."""
    b = api.ModelBuilder()
    half = 0.5 * link_length
    capsule_rot = wp.quat(0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))  # local Z -> world X
    is_ours = api.__name__.startswith("newton_tendon")
    parent = -1
    joints = []
    for i in range(links):
        x = (i + 0.5) * link_length
        body = b.add_link(xform=wp.transform(wp.vec3(x, 0.0, height), wp.quat_identity()), label=f"link_{i}")
        shape = {"xform": wp.transform(wp.vec3(0.0), capsule_rot), "radius": radius, "half_height": half - radius}
        if is_ours:
            b.add_shape_capsule(body, density=1000.0, mu=0.6, **shape)
        else:
            b.add_shape_capsule(body, cfg=api.ModelBuilder.ShapeConfig(density=1000.0, mu=0.6), **shape)
        parent_xform = wp.transform(
            wp.vec3(0.0, 0.0, height) if parent < 0 else wp.vec3(half, 0.0, 0.0), wp.quat_identity()
        )
        joints.append(
            b.add_joint_revolute(
                parent,
                body,
                parent_xform=parent_xform,
                child_xform=wp.transform(wp.vec3(-half, 0.0, 0.0), wp.quat_identity()),
                axis=(0.0, 1.0, 0.0),
                label=f"hinge_{i}",
            )
        )
        parent = body
    b.add_articulation(joints)
    return b


def _world_builder(api, scene: str):
    if scene in CABLE_SCENES:
        return bench_cables.SCENE_BUILDERS[scene](api)
    if scene == "chain":
        return chain(api)
    if scene in TRANSMISSION_SCENES:
        if not api.__name__.startswith("newton_tendon"):
            raise NotImplementedError(f"{api.__name__} has no transmission tendons ({scene})")
        import bench_transmission

        return bench_transmission.SCENES[scene[3:]]()
    raise ValueError(f"unknown scene {scene!r}; choose from {', '.join(ALL_SCENES)}")


class Case:
    """One scene, ``worlds`` worlds, one solver, ready to step (see the module docstring)."""

    def __init__(self, api, scene: str, solver: str, worlds: int, device: str, iterations: int, dt: float | None):
        self.api = api
        self.scene = scene
        self.solver_kind = solver
        self.worlds = worlds
        self.device = device
        self.dt = DEFAULT_DT[scene] if dt is None else float(dt)
        scene_builder = api.ModelBuilder()
        if scene in RIGID_SCENES:
            scene_builder.add_ground_plane()
        world = _world_builder(api, scene)
        self.bodies_per_world = world.body_count
        scene_builder.replicate(world, worlds)
        if solver == "vbd":
            scene_builder.color()
        self.model = scene_builder.finalize(device=device)
        cls = {"xpbd": api.solvers.SolverXPBD, "vbd": api.solvers.SolverVBD}[solver]
        self.solver = cls(self.model, iterations=iterations)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.pipeline = None
        self.contacts = None
        if scene in RIGID_SCENES:
            self.pipeline = api.CollisionPipeline(self.model)
            self.contacts = self.pipeline.contacts()
        self.steps_taken = 0
        self._q0 = self.state_0.body_q.numpy().copy()

    def _step(self, s_in, s_out):
        if self.pipeline is not None:
            self.pipeline.collide(s_in, self.contacts)
        self.solver.step(s_in, s_out, self.control, self.contacts, self.dt)

    def step_pair(self):
        """Two steps, state_0 -> state_1 -> state_0 (graph-capturable)."""
        self._step(self.state_0, self.state_1)
        self._step(self.state_1, self.state_0)
        self.steps_taken += 2

    # --------------------------------------------------------------------------------------

    def _world0_body(self, local: int) -> int:
        """Index of world 0's body ``local`` (newton and ours both lay replicated bodies out world by world)."""
        return local

    def _tension(self) -> np.ndarray:
        t = getattr(self.solver, "tendon_segment_material_tension", None)
        return np.zeros(0) if t is None else t.numpy()

    def answer(self) -> dict:
        """Observables of world 0 after ``steps_taken`` steps (units in the key names' docs)."""
        q = self.state_0.body_q.numpy()
        t = self.steps_taken * self.dt
        out = {"time_s": t, "finite": bool(np.all(np.isfinite(q)))}
        if self.scene in ("pulley", "pinhole"):
            segs = self.model.tendon_segment_count // max(self.worlds, 1)
            out["drop_m"] = float(self._q0[0, 2] - q[0, 2])
            out["tension_N"] = float(np.mean(self._tension()[:segs]))
            if self.scene in ANALYTIC:
                out["drop_analytic_m"] = 0.5 * ANALYTIC[self.scene]["accel"] * t * t
                out["tension_analytic_N"] = ANALYTIC[self.scene]["tension"]
        elif self.scene == "routing_3d":
            segs = self.model.tendon_segment_count // max(self.worlds, 1)
            out["position_m"] = [float(v) for v in q[0, :3]]
            out["tension_N"] = float(self._tension()[segs - 1])
        elif self.scene == "chain":
            tip = self.bodies_per_world - 1
            out["position_m"] = [float(v) for v in q[tip, :3]]
        else:
            n = self.model.transmission_count // max(self.worlds, 1)
            out["length_m"] = [float(v) for v in self.solver.transmission_length.numpy()[:n]]
            out["tension_N"] = [float(v) for v in self.solver.transmission_tension.numpy()[:n]]
        return out

    def spread(self) -> float:
        """Largest |body_q - world 0's body_q| over all worlds [m and quaternion units]."""
        q = self.state_0.body_q.numpy()
        n = self.bodies_per_world
        if self.worlds <= 1 or q.shape[0] != n * self.worlds:
            return 0.0
        per_world = q.reshape(self.worlds, n, 7)
        return float(np.max(np.abs(per_world - per_world[0:1])))


def engine_module(engine: str):
    """``newton_tendon`` for "ours", ``newton`` for "newton" (ImportError when it is not installed)."""
    if engine == "ours":
        import newton_tendon

        return newton_tendon
    if engine == "newton":
        import newton

        return newton
    raise ValueError(f"unknown engine {engine!r}")


def build_case(
    engine: str, scene: str, solver: str, worlds: int, device: str, iterations: int = 8, dt: float | None = None
) -> Case:
    """A ready-to-step :class:`Case` of ``scene`` built with ``engine`` ("ours" or "newton")."""
    return Case(engine_module(engine), scene, solver, worlds, device, iterations, dt)


ANSWER_STEPS = {"pulley": 240, "pinhole": 240, "routing_3d": 240, "chain": 60}
"""Steps of the answer check per scene: 1 s for the cables, 0.25 s for the chain (before it reaches
the ground, where the two engines' contact models differ)."""
POSITION_KEYS = ("drop_m", "position_m")
"""Observables compared with newton: positions only (newton reports no force for an inextensible
span; its ``tendon_segment_material_tension`` is (l - L)/c with c = 0)."""


def compare_answers(ours: dict, ref: dict | None, keys=("drop_m", "tension_N", "position_m", "length_m")) -> dict:
    """Relative differences of the shared observables (``ref``: another engine's answer, or None for
    the analytic one).

    Returns ``{"observable": relative difference}``; vector observables use the Euclidean norm of
    the difference over the norm of the reference (floored at 1 cm or 0.1 N so values near zero do
    not blow up).
    """
    out = {}
    if ref is None:
        for key, unit in (("drop", "m"), ("tension", "N")):
            if f"{key}_analytic_{unit}" in ours:
                a, b = ours[f"{key}_{unit}"], ours[f"{key}_analytic_{unit}"]
                out[key] = abs(a - b) / max(abs(b), 1.0e-2)
        return out
    for key in keys:
        if key in ours and key in ref:
            floor = 0.1 if key.endswith("_N") else 1.0e-2
            a, b = np.atleast_1d(ours[key]), np.atleast_1d(ref[key])
            out[key.rsplit("_", 1)[0]] = float(np.linalg.norm(a - b) / max(float(np.linalg.norm(b)), floor))
    return out


def answer_check(scene: str, solver: str, device: str, iterations: int = 8, newton_ok: bool = True) -> dict:
    """Run ``scene`` for ``ANSWER_STEPS`` steps in one world with ours (and newton) and compare.

    Returns ``{"ours": answer, "newton": answer or None, "vs_ideal": diffs, "vs_newton": diffs,
    "newton_vs_ideal": diffs}`` (relative differences, see ``compare_answers``).
    """
    steps = ANSWER_STEPS.get(scene, 200)
    answers = {}
    for engine in ("ours", "newton") if newton_ok and scene in PEER_SCENES else ("ours",):
        case = build_case(engine, scene, solver, 1, device, iterations)
        for _ in range(steps // 2):
            case.step_pair()
        answers[engine] = case.answer()
    ours, ref = answers["ours"], answers.get("newton")
    return {
        "steps": steps,
        "ours": ours,
        "newton": ref,
        "vs_ideal": compare_answers(ours, None),
        "vs_newton": compare_answers(ours, ref, POSITION_KEYS) if ref else {},
        "newton_vs_ideal": compare_answers(ref, None) if ref else {},
    }
