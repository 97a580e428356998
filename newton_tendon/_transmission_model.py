"""Finalize transmission tendons: flat model arrays, the kernel structs, and reference lengths."""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.kernels.spatial import SpatialPathModel
from newton_tendon.kernels.transmission import TransmissionModel, TransmissionScratch, transmission_lengths
from newton_tendon.kernels.types import JOINT_D6, JOINT_REVOLUTE

from .transmission import SPATIAL_PATH_KEYS

# (model attribute, builder property, dtype); None-able properties are resolved to the reference.
_PROPERTY_ARRAYS = (
    ("transmission_stiffness", "stiffness"),
    ("transmission_damping", "damping"),
    ("transmission_activation_time", "activation_time"),
    ("transmission_actuation_lower", "actuation_lower"),
    ("transmission_actuation_upper", "actuation_upper"),
    ("transmission_lower_limit", "lower_limit"),
    ("transmission_upper_limit", "upper_limit"),
    ("transmission_limit_margin", "limit_margin"),
    ("transmission_position_correction", "position_correction"),
    ("transmission_limit_compliance", "limit_compliance"),
    ("transmission_friction_loss", "friction_loss"),
    ("transmission_friction_compliance", "friction_compliance"),
    ("transmission_armature", "armature"),
    ("transmission_width", "width"),
)
TRANSMISSION_PROPERTY_ARRAYS = tuple(name for name, _ in _PROPERTY_ARRAYS) + (
    "transmission_spring_lower",
    "transmission_spring_upper",
)
"""Model arrays of transmission properties users may edit in place (then ``notify_model_changed``)."""


def _f32(values) -> np.ndarray:
    """float32 with +-inf kept (Warp stores them as float32 infinities)."""
    return np.asarray(values, dtype=np.float64).astype(np.float32)


def finalize_transmissions(b, m, world_count: int):
    """Fill ``m.transmission_*`` and ``m.coupling_*`` from builder ``b`` and measure the reference
    lengths at the model's initial pose. Without transmission tendons every array is empty."""
    dev = m.device
    n = b.transmission_count
    m.transmission_count = n
    m.transmission_label = list(b.transmission_label)
    tw = np.asarray(b.transmission_world, dtype=np.int32)
    if b.world_count == 0:
        tw = np.zeros_like(tw)
    m.transmission_world = wp.array(tw, dtype=wp.int32, device=dev)
    m.transmission_type = wp.array(np.asarray(b.transmission_type, dtype=np.int32), dtype=wp.int32, device=dev)

    # Spatial paths (fixed tendons own no elements) and fixed terms (spatial tendons own none).
    counts = [len(p["type"]) if p else 0 for p in b.transmission_path]
    start = np.zeros(n + 1, dtype=np.int32)
    start[1:] = np.cumsum(counts, dtype=np.int64)
    m.transmission_element_count = int(start[-1])

    def cat(key, dtype, width=0):
        values = [v for p in b.transmission_path if p for v in p[key]]
        shape = (len(values), width) if width else (len(values),)
        return np.asarray(values, dtype=dtype).reshape(shape)

    path = SpatialPathModel()
    path.start = wp.array(start, dtype=wp.int32, device=dev)
    for key in SPATIAL_PATH_KEYS:
        if key in ("offset", "axis", "side_offset"):
            setattr(path, key, wp.array(cat(key, np.float32, 3), dtype=wp.vec3, device=dev))
        elif key in ("radius", "divisor"):
            setattr(path, key, wp.array(cat(key, np.float32), dtype=float, device=dev))
        else:
            setattr(path, key, wp.array(cat(key, np.int32), dtype=wp.int32, device=dev))
    m.transmission_path = path

    term_counts = [len(t) for t in b.transmission_terms]
    term_start = np.zeros(n + 1, dtype=np.int32)
    term_start[1:] = np.cumsum(term_counts, dtype=np.int64)
    m.transmission_term_count = int(term_start[-1])
    m.transmission_term_start = wp.array(term_start, dtype=wp.int32, device=dev)
    m.transmission_slot_count = m.transmission_element_count + 2 * m.transmission_term_count
    m.transmission_term_joint = wp.array(
        np.asarray([j for t in b.transmission_terms for j, _ in t], dtype=np.int32), dtype=wp.int32, device=dev
    )
    m.transmission_term_coefficient = wp.array(
        _f32([c for t in b.transmission_terms for _, c in t]), dtype=float, device=dev
    )
    # Each term's dof (its joint's first dof, plus the D6 axis) and what its coordinate is: 0 a length
    # along that dof's axis, 1 a twist about it, 2 + i the i-th angle of a universal joint.
    term_dof, term_angular = [], []
    qd_start = m.joint_qd_start.numpy()
    for terms, axes in zip(b.transmission_terms, b.transmission_term_axes, strict=True):
        for (j, _), k in zip(terms, axes, strict=True):
            term_dof.append(int(qd_start[j]) + k)
            jt = b.joint_type[j]
            kind = int(jt == JOINT_REVOLUTE)
            if jt == JOINT_D6 and k >= b.joint_dof_dim[j][0]:
                n_lin, n_ang = b.joint_dof_dim[j]
                kind = 1 if n_ang == 1 else 2 + (k - n_lin)
            term_angular.append(kind)
    m.transmission_term_dof = wp.array(np.asarray(term_dof, dtype=np.int32), dtype=wp.int32, device=dev)
    m.transmission_term_angular = wp.array(np.asarray(term_angular, dtype=np.int32), dtype=wp.int32, device=dev)

    props = b.transmission_properties
    for name, key in _PROPERTY_ARRAYS:
        setattr(m, name, wp.array(_f32([p[key] for p in props]), dtype=float, device=dev))

    # Reference lengths at the initial pose, then the properties that default to them. Revolute
    # terms start on the principal branch (-pi, pi] (unwrapped relative to 0).
    m.transmission_reference_length = wp.zeros(n, dtype=float, device=dev)
    scratch = transmission_scratch(m)
    if n:
        wp.launch(
            transmission_lengths,
            dim=n,
            inputs=[transmission_model_struct(m), m.body_q, scratch],
            outputs=[m.transmission_reference_length],
            device=dev,
        )
    m.transmission_term_initial_coordinate = wp.clone(scratch.term_q)
    ref = m.transmission_reference_length.numpy().astype(np.float64)

    def resolved(key):
        return _f32([ref[i] if p[key] is None else p[key] for i, p in enumerate(props)])

    m.transmission_spring_lower = wp.array(resolved("spring_lower"), dtype=float, device=dev)
    m.transmission_spring_upper = wp.array(resolved("spring_upper"), dtype=float, device=dev)
    # Defaults copied into Control.
    m.transmission_drive_force = wp.array(_f32([p["drive_force"] for p in props]), dtype=float, device=dev)
    m.transmission_target_length = wp.array(resolved("target_length"), dtype=float, device=dev)
    m.transmission_target_velocity = wp.array(_f32([p["target_velocity"] for p in props]), dtype=float, device=dev)
    m.transmission_position_gain = wp.array(_f32([p["position_gain"] for p in props]), dtype=float, device=dev)
    m.transmission_velocity_gain = wp.array(_f32([p["velocity_gain"] for p in props]), dtype=float, device=dev)
    m.transmission_enabled = wp.array(
        np.asarray([int(p["enabled"]) for p in props], dtype=np.int32), dtype=wp.int32, device=dev
    )

    nc = b.coupling_count
    m.coupling_count = nc
    m.coupling_label = list(b.coupling_label)
    m.coupling_first = wp.array(np.asarray(b.coupling_first, dtype=np.int32), dtype=wp.int32, device=dev)
    m.coupling_second = wp.array(np.asarray(b.coupling_second, dtype=np.int32), dtype=wp.int32, device=dev)
    coeffs = np.asarray(b.coupling_coefficients, dtype=np.float32).reshape(nc, 5)
    m.coupling_coefficients = wp.array(coeffs, dtype=wp.types.vector(5, float), device=dev)
    m.coupling_compliance = wp.array(_f32(b.coupling_compliance), dtype=float, device=dev)
    m.coupling_position_correction = wp.array(_f32(b.coupling_position_correction), dtype=float, device=dev)
    m.coupling_enabled = wp.array(
        np.asarray([int(e) for e in b.coupling_enabled], dtype=np.int32), dtype=wp.int32, device=dev
    )
    tendon_slots = np.diff(np.asarray(start, dtype=np.int64)) + 2 * np.diff(term_start.astype(np.int64))
    per_coupling = [
        tendon_slots[f] + (tendon_slots[t2] if t2 >= 0 else 0)
        for f, t2 in zip(b.coupling_first, b.coupling_second, strict=True)
    ]
    cstart = np.zeros(nc + 1, dtype=np.int32)
    cstart[1:] = np.cumsum(per_coupling, dtype=np.int64)
    m.coupling_slot_start = wp.array(cstart, dtype=wp.int32, device=dev)
    m.coupling_slot_count = int(cstart[-1])
    # Slot -> owner maps (VBD groups a body's slots by tendon or coupling).
    tstart = np.concatenate([[0], np.cumsum(tendon_slots)]).astype(np.int64)
    m.transmission_slot_tendon = wp.array(
        np.repeat(np.arange(n, dtype=np.int32), tendon_slots.astype(np.int64)), dtype=wp.int32, device=dev
    )
    c_owner, c_source = [], []
    for c, (f, t2) in enumerate(zip(b.coupling_first, b.coupling_second, strict=True)):
        for t in (f, t2):
            if t >= 0:
                c_owner.extend([c] * int(tendon_slots[t]))
                c_source.extend(range(int(tstart[t]), int(tstart[t + 1])))
    m.coupling_slot_coupling = wp.array(np.asarray(c_owner, dtype=np.int32), dtype=wp.int32, device=dev)
    m.coupling_slot_source = wp.array(np.asarray(c_source, dtype=np.int32), dtype=wp.int32, device=dev)
    # Couplings of each tendon (CSR), so a tendon sums its coupling forces without atomics.
    of_tendon = [[] for _ in range(n)]
    for c, (f, t2) in enumerate(zip(b.coupling_first, b.coupling_second, strict=True)):
        of_tendon[f].append(c)
        if t2 >= 0:
            of_tendon[t2].append(c)
    tc_start = np.zeros(n + 1, dtype=np.int32)
    tc_start[1:] = np.cumsum([len(x) for x in of_tendon], dtype=np.int64)
    m.transmission_coupling_start = wp.array(tc_start, dtype=wp.int32, device=dev)
    m.transmission_coupling = wp.array(
        np.asarray([c for x in of_tendon for c in x], dtype=np.int32), dtype=wp.int32, device=dev
    )
    cw = np.asarray(b.coupling_world, dtype=np.int32)
    if b.world_count == 0:
        cw = np.zeros_like(cw)
    m.coupling_world = wp.array(cw, dtype=wp.int32, device=dev)


def transmission_model_struct(m) -> TransmissionModel:
    """The transmission-tendon constants of ``m`` bundled for kernels (arrays shared, not copied)."""
    s = TransmissionModel()
    s.type = m.transmission_type
    s.path = m.transmission_path
    s.term_start = m.transmission_term_start
    s.term_joint = m.transmission_term_joint
    s.term_dof = m.transmission_term_dof
    s.term_angular = m.transmission_term_angular
    s.term_coefficient = m.transmission_term_coefficient
    s.joint_type = m.joint_type
    s.joint_parent = m.joint_parent
    s.joint_child = m.joint_child
    s.joint_X_p = m.joint_X_p
    s.joint_X_c = m.joint_X_c
    s.joint_axis = m.joint_axis
    s.joint_qd_start = m.joint_qd_start
    s.body_com = m.body_com
    return s


def transmission_scratch(m) -> TransmissionScratch:
    """Per-element and per-slot geometry scratch for the transmission kernels."""
    dev = m.device
    ne = m.transmission_element_count
    ns = m.transmission_slot_count
    s = TransmissionScratch()
    s.point_a = wp.zeros(ne, dtype=wp.vec3, device=dev)
    s.grad_a = wp.zeros(ne, dtype=wp.vec3, device=dev)
    s.point_b = wp.zeros(ne, dtype=wp.vec3, device=dev)
    s.grad_b = wp.zeros(ne, dtype=wp.vec3, device=dev)
    s.jac = wp.zeros(ns, dtype=wp.spatial_vector, device=dev)
    s.resp = wp.zeros(ns, dtype=wp.spatial_vector, device=dev)
    s.term_ref = wp.zeros(m.transmission_term_count, dtype=float, device=dev)
    s.term_q = wp.zeros(m.transmission_term_count, dtype=float, device=dev)
    s.body = wp.full(ns, -1, dtype=wp.int32, device=dev) if ns else wp.zeros(0, dtype=wp.int32, device=dev)
    return s


def coupling_model_struct(m):
    """The coupling constants of ``m`` bundled for kernels."""
    from newton_tendon.kernels.transmission import CouplingModel

    s = CouplingModel()
    s.first = m.coupling_first
    s.second = m.coupling_second
    s.coefficients = m.coupling_coefficients
    s.compliance = m.coupling_compliance
    s.position_correction = m.coupling_position_correction
    s.slot_start = m.coupling_slot_start
    return s
