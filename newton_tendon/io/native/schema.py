"""What a native document holds: its format name and version, the builder fields it stores, and
the names it writes for the builder's integer codes (joint, shape and guide types, flags, path
elements, attribute domains and dtypes)."""

from __future__ import annotations

import math

from newton_tendon._transmission_builder import TRANSMISSION_FIXED, TRANSMISSION_SPATIAL
from newton_tendon.kernels import types as T
from newton_tendon.kernels.spatial import SPATIAL_PULLEY, SPATIAL_SITE
from newton_tendon.tendon import AttributeAssignment, AttributeFrequency, TendonGuideFlags, TendonGuideType
from newton_tendon.transmission import WRAP_KINDS

FORMAT_NAME = "newton_tendon"
"""Value of the document's ``format`` field."""

FORMAT_VERSION = 1
"""Version written by ``save``; ``load`` reads this version only."""

BUILDER_FIELDS = frozenset(
    {
        # Scene.
        "up_axis",
        "gravity",
        "current_world",
        "world_count",
        "rigid_contact_margin",
        # bodies[]
        "body_q",
        "body_qd",
        "body_mass",
        "body_com",
        "body_inertia",
        "body_flags",
        "body_lock_inertia",
        "body_world",
        "body_label",
        "body_color",
        # shapes[], shape_filter_pairs, body_filter_pairs
        "shape_type",
        "shape_body",
        "shape_transform",
        "shape_scale",
        "shape_mu",
        "shape_restitution",
        "shape_collision_group",
        "shape_has_collision",
        "shape_margin",
        "shape_gap",
        "shape_world",
        "shape_label",
        "shape_mesh",
        "shape_friction_max",
        "shape_filter_pairs",
        "shape_contact_pair_mu",
        "body_filter_pairs",
        # joints[] (with dofs[]), articulations[]
        "joint_type",
        "joint_parent",
        "joint_child",
        "joint_X_p",
        "joint_X_c",
        "joint_enabled",
        "joint_world",
        "joint_label",
        "joint_dof_dim",
        "joint_axis",
        "joint_limit_lower",
        "joint_limit_upper",
        "joint_target_ke",
        "joint_target_kd",
        "joint_armature",
        "joint_target_pos",
        "joint_target_vel",
        "joint_limit_ke",
        "joint_limit_kd",
        "joint_effort_limit",
        "joint_velocity_limit",
        "joint_target_mode",
        "articulation_start",
        "articulation_label",
        "articulation_joint_end",
        # tendons[] (routed cables with guides[])
        "tendon_start",
        "tendon_world",
        "tendon_label",
        "tendon_guide_body",
        "tendon_guide_type",
        "tendon_guide_flags",
        "tendon_guide_offset",
        "tendon_guide_axis",
        "tendon_guide_radius",
        "tendon_guide_orientation",
        "tendon_guide_mu",
        "tendon_segment_compliance",
        "tendon_segment_damping",
        "tendon_segment_rest_length",
        # custom_attributes[]
        "custom_attributes",
        "custom_attribute_values",
        # transmission_tendons[], couplings[]
        "transmission_type",
        "transmission_world",
        "transmission_label",
        "transmission_properties",
        "transmission_path",
        "transmission_terms",
        "transmission_term_axes",
        "coupling_first",
        "coupling_second",
        "coupling_coefficients",
        "coupling_compliance",
        "coupling_position_correction",
        "coupling_enabled",
        "coupling_world",
        "coupling_label",
    }
)
"""Every ``ModelBuilder`` instance attribute the format stores. A test compares it with
``vars(ModelBuilder())`` so that a new builder attribute cannot be silently dropped by ``save``."""

_TOP_FIELDS = (
    "format",
    "version",
    "up_axis",
    "gravity",
    "world_count",
    "current_world",
    "rigid_contact_margin",
    "bodies",
    "body_color",
    "shapes",
    "shape_filter_pairs",
    "shape_contact_pairs",
    "body_filter_pairs",
    "joints",
    "articulations",
    "articulation_joint_end",
    "tendons",
    "transmission_tendons",
    "couplings",
    "custom_attributes",
)

_JOINT_TYPES = {
    int(T.JOINT_PRISMATIC): "prismatic",
    int(T.JOINT_REVOLUTE): "revolute",
    int(T.JOINT_BALL): "ball",
    int(T.JOINT_FIXED): "fixed",
    int(T.JOINT_FREE): "free",
    int(T.JOINT_D6): "d6",
}
_SHAPE_TYPES = {int(k): v for k, v in T.SHAPE_TYPE_NAMES.items()}
_GUIDE_TYPES = {int(g): g.name.lower() for g in TendonGuideType}
_GUIDE_FLAGS = {int(f): f.name.lower() for f in TendonGuideFlags}
_BODY_FLAGS = {int(T.BODY_KINEMATIC): "kinematic"}
_TRANSMISSION_KINDS = {TRANSMISSION_SPATIAL: "spatial", TRANSMISSION_FIXED: "fixed"}
_ELEMENT_TYPES = {v: k for k, v in WRAP_KINDS.items()}
_ELEMENT_TYPES[int(SPATIAL_SITE)] = "site"
_ELEMENT_TYPES[int(SPATIAL_PULLEY)] = "pulley"
_DTYPES = {"float": float, "int": int, "vec3": "vec3"}
_INF_STRINGS = {"inf": math.inf, "-inf": -math.inf}
_FREQUENCIES = {int(f): f.domain for f in AttributeFrequency}
_ASSIGNMENTS = {int(a): a.name.lower() for a in AttributeAssignment}
