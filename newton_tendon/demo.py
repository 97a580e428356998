"""The default demo scene: a pendulum chain that swings down onto the ground, replicated into worlds."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import warp as wp

from .builder import ModelBuilder
from .collision import CollisionPipeline
from .kinematics import eval_joint_coordinates
from .solvers import SolverXPBD


def pendulum_chain(
    links: int = 4, link_length: float = 0.4, radius: float = 0.05, height: float = 1.0, mass_scale: float = 1.0
) -> ModelBuilder:
    """A chain of capsule links hinged about +Y, starting horizontal, its first hinge ``height`` [m] up."""
    b = ModelBuilder()
    half = 0.5 * link_length
    capsule_rot = (0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))  # local Z -> world X
    parent = -1
    for i in range(links):
        x = (i + 0.5) * link_length
        body = b.add_link(xform=(x, 0.0, height, 0.0, 0.0, 0.0, 1.0), label=f"link_{i}")
        b.add_shape_capsule(
            body,
            xform=(0, 0, 0, *capsule_rot),
            radius=radius,
            half_height=half - radius,
            density=1000.0 * mass_scale,
            mu=0.6,
        )
        parent_xform = (0.0, 0.0, height, 0, 0, 0, 1) if parent < 0 else (half, 0.0, 0.0, 0, 0, 0, 1)
        b.add_joint_revolute(
            parent,
            body,
            parent_xform=parent_xform,
            child_xform=(-half, 0.0, 0.0, 0, 0, 0, 1),
            axis=(0.0, 1.0, 0.0),
            label=f"hinge_{i}",
        )
        parent = body
    b.add_articulation()
    return b


def run_demo(
    worlds: int = 4,
    seconds: float = 2.0,
    dt: float = 1.0 / 240.0,
    device=None,
    out_dir="demo_output",
    iterations: int = 8,
) -> dict:
    """Build, step and summarize the demo; writes ``summary.json`` and ``trajectory.npz`` into ``out_dir``."""
    scene = ModelBuilder()
    scene.add_ground_plane()
    chain = pendulum_chain()
    for w in range(worlds):
        # Each world gets a different link density, so the worlds visibly differ.
        scene.add_world(pendulum_chain(mass_scale=1.0 + 0.25 * w) if w else chain)
    t0 = time.perf_counter()
    model = scene.finalize(device)
    solver = SolverXPBD(model, iterations=iterations)
    pipeline = CollisionPipeline(model)
    contacts = pipeline.contacts()
    state_0, state_1 = model.state(), model.state()
    control = model.control()
    steps = max(2, int(round(seconds / dt)))
    frames = []

    def step():
        nonlocal state_0, state_1
        pipeline.collide(state_0, contacts)
        solver.step(state_0, state_1, control, contacts, dt)
        state_0, state_1 = state_1, state_0

    step()
    wp.synchronize_device(model.device)
    cold = time.perf_counter() - t0
    t1 = time.perf_counter()
    for i in range(1, steps):
        step()
        if i % 8 == 0:
            frames.append(state_0.body_q.numpy())
    wp.synchronize_device(model.device)
    wall = time.perf_counter() - t1
    joint_q, joint_qd = eval_joint_coordinates(model, state_0)
    body_q = state_0.body_q.numpy()
    n_links = model.body_count // worlds
    summary = {
        "device": str(model.device),
        "worlds": worlds,
        "bodies": model.body_count,
        "joints": model.joint_count,
        "contact_slots": model.contact_capacity,
        "steps": steps,
        "dt": dt,
        "cold_start_s": cold,
        "world_steps_per_s": worlds * (steps - 1) / wall,
        "contacts_at_end": contacts.count(),
        "tip_height_m": [float(body_q[w * n_links + n_links - 1, 2]) for w in range(worlds)],
        "joint_q_world0_rad": [float(v) for v in joint_q.numpy()[:n_links]],
        "finite": bool(np.all(np.isfinite(body_q)) and np.all(np.isfinite(joint_qd.numpy()))),
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    np.savez_compressed(out / "trajectory.npz", body_q=np.asarray(frames), body_label=np.asarray(model.body_label))
    return summary


def format_summary(s: dict) -> str:
    """A short human-readable table of a demo summary."""
    rows = [
        ("device", s["device"]),
        ("worlds x bodies", f"{s['worlds']} x {s['bodies'] // s['worlds']}"),
        ("steps (dt)", f"{s['steps']} ({s['dt']:.5f} s)"),
        ("cold start (incl. compile)", f"{s['cold_start_s']:.2f} s"),
        ("throughput", f"{s['world_steps_per_s']:,.0f} world-steps/s"),
        ("contacts at end", str(s["contacts_at_end"])),
        ("tip height per world [m]", ", ".join(f"{h:.3f}" for h in s["tip_height_m"])),
        ("hinge angles world 0 [rad]", ", ".join(f"{a:+.3f}" for a in s["joint_q_world0_rad"])),
        ("all finite", str(s["finite"])),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
