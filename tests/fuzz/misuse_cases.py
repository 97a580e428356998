"""The misuse fuzzer's cases (issue 41), run by ``test_misuse.py`` in a child process.

Each case calls one public entry point the way a confused user or an adversary would: with the
State, Control or Contacts of another model, None, a string, a NumPy array where a Warp array
belongs, an array of the wrong dtype or shape, NaN and inf scalars, or invalid builder input. A
case passes when the call raises TypeError or ValueError whose message names the entry point, and
afterwards the model, the states, the control and the solvers are as they were and still step to
finite poses. A segmentation fault kills the child; the parent then records the case that was
running as a crash and starts a new child at the next case, so one crash never hides the others.

Run by hand: ``python -m tests.fuzz.misuse_cases cpu [first_case]``. Protocol on stdout, one line
each: ``START i name``, then ``PASS i`` or ``FAIL i reason``; ``COUNT n`` first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

import numpy as np
import warp as wp

wp.config.quiet = True

import newton_tendon as nt  # noqa: E402
from newton_tendon import TendonGuide, TendonGuideType  # noqa: E402
from newton_tendon.io import native  # noqa: E402
from newton_tendon.solvers import SolverVBD, SolverXPBD  # noqa: E402
from newton_tendon.transmission import TendonSite  # noqa: E402

DT = 1.0 / 240.0
SPHERES = 5
"""Bodies of the big model: a chain of hinged spheres carrying a routed cable and a spatial tendon."""


def big_builder() -> nt.ModelBuilder:
    """Five hinged spheres in a chain, a ground plane, a routed cable and a spatial tendon."""
    b = nt.ModelBuilder()
    b.add_ground_plane()
    bodies = []
    parent = -1
    for i in range(SPHERES):
        body = b.add_link(xform=(0.3 * (i + 1), 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), label=f"sphere_{i}")
        b.add_shape_sphere(body, radius=0.1)
        parent_xform = (0.0, 0.0, 2.0, 0, 0, 0, 1) if parent < 0 else (0.3, 0.0, 0.0, 0, 0, 0, 1)
        b.add_joint_revolute(parent, body, parent_xform=parent_xform, axis=(0.0, 1.0, 0.0))
        bodies.append(body)
        parent = body
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(0.0, 0.0, 2.5)),
            TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE, offset=(0.9, 0.0, 2.5), mu=0.3),
            TendonGuide(body=bodies[-1]),
        ],
        label="cable",
    )
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(0.0, 0.0, 2.2)), TendonSite(body=bodies[1])], stiffness=50.0, label="muscle"
    )
    b.color()
    return b


def small_builder() -> nt.ModelBuilder:
    """One free sphere over a ground plane."""
    b = nt.ModelBuilder()
    b.add_ground_plane()
    body = b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), label="ball")
    b.add_shape_sphere(body, radius=0.1)
    b.color()
    return b


class Context:
    """The objects every case misuses; built once per child process."""

    def __init__(self, device: str):
        self.device = device
        self.big_builder = big_builder()
        self.big = self.big_builder.finalize(device)
        self.twin = self.big_builder.finalize(device)  # another model of the same layout
        self.small = small_builder().finalize(device)
        self.xpbd = SolverXPBD(self.big)
        self.vbd = SolverVBD(self.big)
        self.pipeline = nt.CollisionPipeline(self.big)
        self.small_pipeline = nt.CollisionPipeline(self.small)
        self.s0, self.s1 = self.big.state(), self.big.state()
        self.control = self.big.control()
        self.contacts = self.pipeline.contacts()
        self.small_state = self.small.state()
        self.small_control = self.small.control()
        self.small_contacts = self.small_pipeline.contacts()
        self.joint_q = wp.zeros(self.big.joint_coord_count, dtype=float, device=device)
        self.joint_qd = wp.zeros(self.big.joint_dof_count, dtype=float, device=device)

    def watched(self) -> dict[str, np.ndarray]:
        """Copies of every array a failed call must leave alone: the two states, the control, the
        contact buffer and the model."""
        out = {}
        for prefix, obj in (("s0", self.s0), ("s1", self.s1), ("control", self.control), ("model", self.big)):
            for name, arr in vars(obj).items():
                if isinstance(arr, wp.array):
                    out[f"{prefix}.{name}"] = arr.numpy().copy()
        out["contacts.valid"] = self.contacts.valid.numpy().copy()
        return out

    def usable(self) -> str | None:
        """Collide and take one step with each solver; None if every pose stays finite."""
        for solver in (self.xpbd, self.vbd):
            self.pipeline.collide(self.s0, self.contacts)
            solver.step(self.s0, self.s1, self.control, self.contacts, DT)
            self.s0, self.s1 = self.s1, self.s0
            if not np.isfinite(self.s0.body_q.numpy()).all():
                return f"{type(solver).__name__} gave non-finite poses after the case"
        return None


def _open_box(builder, body):
    """A 0.2 m box mesh missing its two top triangles (it bounds no solid)."""
    h = 0.1
    v = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    faces = [t for a, b_, c, d in quads for t in ((a, b_, c), (a, c, d))][:-2]
    return builder.add_shape_mesh(body, vertices=v, faces=faces)


def _builder_case(fn):
    """A builder case: ``fn`` gets a fresh builder with one body and must raise; the builder's counts
    must not change and it must still finalize."""

    def run(ctx):
        b = nt.ModelBuilder()
        body = b.add_body(xform=(0.0, 0.0, 1.0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 1e-2)
        counts = (b.body_count, b.shape_count, b.joint_count, b.tendon_count)
        try:
            fn(b, body)
        finally:
            after = (b.body_count, b.shape_count, b.joint_count, b.tendon_count)
            if after != counts:
                raise AssertionError(f"the builder changed before the error: {counts} -> {after}")
            b.finalize(ctx.device)

    return run


def cases() -> list[tuple[str, str, object]]:
    """(name, the entry point the error must name, fn(ctx)) of every case."""
    out = []

    def add(name, owner, fn):
        out.append((name, owner, fn))

    bad_objects = {
        "None": lambda c: None,
        "a string": lambda c: "state",
        "a numpy array": lambda c: np.zeros((c.big.body_count, 7), np.float32),
        "a Warp array": lambda c: c.s0.body_q,
        "an int": lambda c: 3,
    }
    for sname in ("xpbd", "vbd"):
        owner = "SolverXPBD.step" if sname == "xpbd" else "SolverVBD.step"

        def step(c, sname=sname, **kw):
            args = dict(state_in=c.s0, state_out=c.s1, control=c.control, contacts=c.contacts, dt=DT)
            args.update({k: v(c) for k, v in kw.items()})
            getattr(c, sname).step(args["state_in"], args["state_out"], args["control"], args["contacts"], args["dt"])

        add(f"{sname} step: state_in of another model", owner, lambda c, s=step: s(c, state_in=lambda c: c.small_state))
        add(
            f"{sname} step: state_out of another model",
            owner,
            lambda c, s=step: s(c, state_out=lambda c: c.small_state),
        )
        add(f"{sname} step: control of another model", owner, lambda c, s=step: s(c, control=lambda c: c.small_control))
        add(
            f"{sname} step: contacts of another model",
            owner,
            lambda c, s=step: s(c, contacts=lambda c: c.small_contacts),
        )
        for what, make in bad_objects.items():
            add(f"{sname} step: state_in {what}", owner, lambda c, s=step, m=make: s(c, state_in=m))
            if what != "None":
                add(f"{sname} step: control {what}", owner, lambda c, s=step, m=make: s(c, control=m))
                add(f"{sname} step: contacts {what}", owner, lambda c, s=step, m=make: s(c, contacts=m))
        add(f"{sname} step: state_out None", owner, lambda c, s=step: s(c, state_out=lambda c: None))
        for dt in (float("nan"), float("inf"), -DT, 0.0, "0.004", None, True, 1e-300, 1e39):
            add(f"{sname} step: dt {dt!r}", owner, lambda c, s=step, dt=dt: s(c, dt=lambda c: dt))
        reset_owner = "SolverXPBD.reset" if sname == "xpbd" else "SolverVBD.reset"
        add(
            f"{sname} reset: state of another model", reset_owner, lambda c, n=sname: getattr(c, n).reset(c.small_state)
        )
        add(f"{sname} reset: state None", reset_owner, lambda c, n=sname: getattr(c, n).reset(None))
        for what, mask in {
            "a list": lambda c: [1],
            "a numpy mask": lambda c: np.ones(1, np.int32),
            "a float32 mask": lambda c: wp.ones(1, dtype=float, device=c.device),
            "a mask of the wrong length": lambda c: wp.ones(5, dtype=wp.int32, device=c.device),
            "a 2-D mask": lambda c: wp.ones((1, 1), dtype=wp.int32, device=c.device),
        }.items():
            add(
                f"{sname} reset: world_mask {what}",
                reset_owner,
                lambda c, n=sname, m=mask: getattr(c, n).reset(c.s0, m(c)),
            )
        add(
            f"{sname} reset: flags a string",
            reset_owner,
            lambda c, n=sname: getattr(c, n).reset(c.s0, flags="all"),
        )
        add(f"{sname} reset: flags a float", reset_owner, lambda c, n=sname: getattr(c, n).reset(c.s0, flags=1.5))
        add(
            f"{sname} reset: body_q of another model",
            reset_owner,
            lambda c, n=sname: getattr(c, n).reset(c.s0, body_q=c.small_state.body_q),
        )
        add(
            f"{sname} reset: body_qd a numpy array",
            reset_owner,
            lambda c, n=sname: getattr(c, n).reset(c.s0, body_qd=np.zeros((SPHERES, 6), np.float32)),
        )
        add(
            f"{sname} reset: remeasure a string",
            reset_owner,
            lambda c, n=sname: getattr(c, n).reset(c.s0, remeasure="yes"),
        )
        geo_owner = "SolverXPBD.update_geometry" if sname == "xpbd" else "SolverVBD.update_geometry"
        add(
            f"{sname} update_geometry: state of another model",
            geo_owner,
            lambda c, n=sname: getattr(c, n).update_geometry(c.small_state),
        )
        add(f"{sname} update_geometry: None", geo_owner, lambda c, n=sname: getattr(c, n).update_geometry(None))

    # Solver construction.
    for cls in (SolverXPBD, SolverVBD):
        name = cls.__name__
        add(f"{name}(None)", name, lambda c, cls=cls: cls(None))
        add(f"{name}(a string)", name, lambda c, cls=cls: cls("model"))
        for it in (0, -1, 2.5, float("nan"), "8", None):
            add(f"{name}(iterations={it!r})", name, lambda c, cls=cls, it=it: cls(c.big, iterations=it))
    for key in ("joint_linear_relaxation", "rigid_contact_relaxation", "tendon_settle_tol"):
        for value in (float("nan"), float("inf"), -1.0):
            add(f"SolverXPBD({key}={value})", "SolverXPBD", lambda c, k=key, v=value: SolverXPBD(c.big, **{k: v}))
    add("SolverXPBD(joint_solver='newton')", "SolverXPBD", lambda c: SolverXPBD(c.big, joint_solver="newton"))
    for key in ("penalty_min", "penalty_max"):
        for value in (float("nan"), float("inf"), -1.0):
            add(f"SolverVBD({key}={value})", "SolverVBD", lambda c, k=key, v=value: SolverVBD(c.big, **{k: v}))

    # Collision.
    co = "CollisionPipeline.collide"
    add("collide: state of another model", co, lambda c: c.pipeline.collide(c.small_state, c.contacts))
    add("collide: contacts of another model", co, lambda c: c.pipeline.collide(c.s0, c.small_contacts))
    add("collide: state None", co, lambda c: c.pipeline.collide(None, c.contacts))
    add("collide: contacts None", co, lambda c: c.pipeline.collide(c.s0, None))
    add("collide: contacts a string", co, lambda c: c.pipeline.collide(c.s0, "contacts"))
    add("collide: state a Warp array", co, lambda c: c.pipeline.collide(c.s0.body_q, c.contacts))
    add("CollisionPipeline(None)", "CollisionPipeline", lambda c: nt.CollisionPipeline(None))
    for margin in (float("nan"), float("inf"), -0.01, "0.01"):
        add(
            f"CollisionPipeline(margin={margin!r})",
            "CollisionPipeline",
            lambda c, m=margin: nt.CollisionPipeline(c.big, rigid_contact_margin=m),
        )

    # Kinematics.
    ej = "eval_joint_coordinates"
    add("eval_joint_coordinates: state of another model", ej, lambda c: nt.eval_joint_coordinates(c.big, c.small_state))
    add("eval_joint_coordinates: state None", ej, lambda c: nt.eval_joint_coordinates(c.big, None))
    add("eval_joint_coordinates: model a string", ej, lambda c: nt.eval_joint_coordinates("model", c.s0))
    add(
        "eval_joint_coordinates: joint_q of the wrong length",
        ej,
        lambda c: nt.eval_joint_coordinates(c.big, c.s0, wp.zeros(2, dtype=float, device=c.device), c.joint_qd),
    )
    add(
        "eval_joint_coordinates: joint_q a numpy array",
        ej,
        lambda c: nt.eval_joint_coordinates(c.big, c.s0, np.zeros(SPHERES, np.float32), c.joint_qd),
    )
    add("eval_fk: state of another model", "eval_fk", lambda c: nt.eval_fk(c.big, c.joint_q, c.joint_qd, c.small_state))
    add("eval_fk: state a string", "eval_fk", lambda c: nt.eval_fk(c.big, c.joint_q, c.joint_qd, "state"))
    add(
        "eval_fk: joint_q float64",
        "eval_fk",
        lambda c: nt.eval_fk(c.big, wp.zeros(SPHERES, dtype=wp.float64, device=c.device), c.joint_qd, c.s1),
    )
    add("eval_ik: state of another model", "eval_ik", lambda c: nt.eval_ik(c.big, c.small_state, c.joint_q, c.joint_qd))

    # State, Control and their copies.
    add("State.assign: a state of another model", "State.assign", lambda c: c.s1.assign(c.small_state))
    add("State.assign: None", "State.assign", lambda c: c.s1.assign(None))
    add("State.assign: a Control", "State.assign", lambda c: c.s1.assign(c.control))
    add("Control.assign: a control of another model", "Control.assign", lambda c: c.control.assign(c.small_control))
    add("Control.assign: a string", "Control.assign", lambda c: c.control.assign("control"))
    add(
        "State.body_q = an array of another length",
        "State.body_q",
        lambda c: setattr(c.s1, "body_q", wp.zeros(1, dtype=wp.transform, device=c.device)),
    )
    add(
        "State.body_qd = a numpy array",
        "State.body_qd",
        lambda c: setattr(c.s1, "body_qd", np.zeros((SPHERES, 6), np.float32)),
    )
    add(
        "State.body_f = an array of another dtype",
        "State.body_f",
        lambda c: setattr(c.s1, "body_f", wp.zeros(SPHERES, dtype=wp.transform, device=c.device)),
    )
    add(
        "Control.joint_f = an array of another length",
        "Control.joint_f",
        lambda c: setattr(c.control, "joint_f", wp.zeros(1, dtype=float, device=c.device)),
    )

    # World masks.
    for worlds in ([-1], [1.5], [1], "0", 5, [True, False], [[0]]):
        add(f"world_mask({worlds!r})", "Model.world_mask", lambda c, w=worlds: c.big.world_mask(w))

    # Viewer and RL readers of a state.
    def record(c, **kw):
        with tempfile.TemporaryDirectory() as tmp:
            rec = nt.viewer.RecorderUSD(c.big, os.path.join(tmp, "misuse.usda"))
            try:
                rec.record(kw.get("state", c.s0), control=kw.get("control"))
            finally:
                rec.close()

    add("RecorderUSD.record: state of another model", "RecorderUSD.record", lambda c: record(c, state=c.small_state))
    add(
        "RecorderUSD.record: control of another model",
        "RecorderUSD.record",
        lambda c: record(c, control=c.small_control),
    )

    def observe(c, state):
        obs = nt.rl.Observer(c.big, nt.rl.ObservationSpec().add("body_position"), c.xpbd)
        obs.compute(state)

    add("Observer.compute: state of another model", "Observer.compute", lambda c: observe(c, c.small_state))
    add("Observer.compute: None", "Observer.compute", lambda c: observe(c, None))

    # Builder input: NaN, inf, unphysical inertia, meshes that bound no solid.
    nan, inf = float("nan"), float("inf")
    add("add_body(mass=nan)", "add_body", _builder_case(lambda b, body: b.add_body(mass=nan)))
    add("add_body(mass=inf)", "add_body", _builder_case(lambda b, body: b.add_body(mass=inf)))
    add(
        "add_body(xform with nan)", "add_body", _builder_case(lambda b, body: b.add_body(xform=(nan, 0, 0, 0, 0, 0, 1)))
    )
    add(
        "add_body(inertia with inf)",
        "add_body",
        _builder_case(lambda b, body: b.add_body(mass=1.0, inertia=np.eye(3) * inf)),
    )
    add(
        "add_body(inertia breaking the triangle inequality)",
        "add_body",
        _builder_case(lambda b, body: b.add_body(mass=1.0, inertia=np.diag([0.01, 0.01, 0.05]))),
    )
    add(
        "add_shape_sphere(radius=inf)",
        "add_shape_sphere",
        _builder_case(lambda b, body: b.add_shape_sphere(body, radius=inf)),
    )
    add(
        "add_shape_sphere(radius=nan)",
        "add_shape_sphere",
        _builder_case(lambda b, body: b.add_shape_sphere(body, radius=nan)),
    )
    add("add_shape_mesh(an open box)", "add_shape_mesh", _builder_case(_open_box))
    add(
        "add_joint_revolute(axis=0)",
        "add_joint_revolute",
        _builder_case(lambda b, body: b.add_joint_revolute(-1, body, axis=(0.0, 0.0, 0.0))),
    )
    add(
        "add_tendon(mu=nan)",
        "add_tendon",
        _builder_case(
            lambda b, body: b.add_tendon(
                [
                    TendonGuide(body=-1, offset=(0, 0, 2)),
                    TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE, offset=(1, 0, 2), mu=nan),
                    TendonGuide(body=body),
                ]
            )
        ),
    )

    # Files.
    def load_world_count(c):
        doc = native.to_dict(small_builder())
        doc["world_count"] = 10**9
        native.loads(json.dumps(doc))

    add("native load: world_count 1e9", "world_count", load_world_count)
    add("native load: not JSON", "", lambda c: native.loads("{not json"))
    add("native load: None", "", lambda c: native.loads(None))
    return out


def run_case(ctx: Context, index: int, name: str, owner: str, fn) -> str | None:
    """None when the case passes, else why not."""
    before = ctx.watched()
    try:
        fn(ctx)
    except (TypeError, ValueError) as err:
        message = str(err)
        if owner and owner not in message:
            return f"{type(err).__name__} does not name {owner!r}: {message}"
    except Exception as err:  # noqa: BLE001 (any other exception is the failure being looked for)
        return f"{type(err).__name__} instead of TypeError/ValueError: {err}\n{traceback.format_exc(limit=3)}"
    else:
        return "no error was raised"
    after = ctx.watched()
    changed = [k for k in before if not np.array_equal(before[k], after[k], equal_nan=True)]
    if changed:
        return f"the refused call changed {', '.join(changed[:4])}"
    return ctx.usable()


def main(argv: list[str]) -> int:
    device = argv[0] if argv else "cpu"
    first = int(argv[1]) if len(argv) > 1 else 0
    all_cases = cases()
    print(f"COUNT {len(all_cases)}", flush=True)
    ctx = Context(device)
    for i in range(first, len(all_cases)):
        name, owner, fn = all_cases[i]
        print(f"START {i} {name}", flush=True)
        reason = run_case(ctx, i, name, owner, fn)
        if reason is None:
            print(f"PASS {i}", flush=True)
        else:
            print(f"FAIL {i} {json.dumps(reason)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
