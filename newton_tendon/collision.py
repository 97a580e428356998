"""Contact generation: a fixed-capacity Contacts buffer and the CollisionPipeline that fills it."""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.kernels.contacts import ContactData, collide_contact_slots

from .layout import check_stamped, check_state, layout_of
from .model import Model


class Contacts:
    """Contact candidates of one step, one entry per slot; slot ranges per shape pair are fixed at finalize.

    Create with :meth:`CollisionPipeline.contacts`.
    """

    def __init__(self, capacity: int, device, slot_shapes=None, *, layout=None):
        self._layout = layout
        """Layout of the model the buffer was made for (``newton_tendon.layout``; None: built by hand,
        checked by capacity and device only)."""
        self.capacity = capacity
        """Number of contact slots."""
        self.slot_shapes = (
            np.full((capacity, 2), -1, dtype=np.int32) if slot_shapes is None else np.asarray(slot_shapes, np.int32)
        )
        """The two shapes of each slot's pair (host array [capacity, 2], int32), fixed at finalize."""
        self.valid = wp.zeros(capacity, dtype=wp.int32, device=device)
        """1 where the slot holds a contact closer than the margin, shape [capacity], int32."""
        self.body_a = wp.full(capacity, -1, dtype=wp.int32, device=device)
        """Body of the first shape (-1 = world), shape [capacity], int32."""
        self.body_b = wp.full(capacity, -1, dtype=wp.int32, device=device)
        """Body of the second shape (-1 = world), shape [capacity], int32."""
        self.point_a = wp.zeros(capacity, dtype=wp.vec3, device=device)
        """Contact point on the first shape's surface, in its body frame [m], shape [capacity], wp.vec3."""
        self.point_b = wp.zeros(capacity, dtype=wp.vec3, device=device)
        """Contact point on the second shape's surface, in its body frame [m], shape [capacity], wp.vec3."""
        self.normal = wp.zeros(capacity, dtype=wp.vec3, device=device)
        """Unit contact normal in world, from the first shape toward the second, shape [capacity], wp.vec3."""
        self.mu = wp.zeros(capacity, dtype=float, device=device)
        """Friction coefficient of the pair [-], shape [capacity], float32."""
        self.restitution = wp.zeros(capacity, dtype=float, device=device)
        """Restitution coefficient of the pair [-], shape [capacity], float32."""
        self.offset_a = wp.zeros(capacity, dtype=wp.vec3, device=device)
        """On a sphere or capsule, the stored point minus the centre behind it, body frame [m] (zero
        on other shapes; the normal row measures from the centre), shape [capacity], wp.vec3."""
        self.offset_b = wp.zeros(capacity, dtype=wp.vec3, device=device)
        """The same for the second shape, shape [capacity], wp.vec3."""

        self._data = ContactData()
        for name in (
            "valid",
            "body_a",
            "body_b",
            "point_a",
            "point_b",
            "normal",
            "mu",
            "restitution",
            "offset_a",
            "offset_b",
        ):
            setattr(self._data, name, getattr(self, name))

    def data(self) -> ContactData:
        """The buffer as the struct kernels take (built once; arrays are edited in place)."""
        return self._data

    def count(self) -> int:
        """Number of valid contacts (synchronizes with the device; not for captured code)."""
        return int(self.valid.numpy().sum()) if self.capacity else 0

    # newton's compacted contact list, built on demand from the slots (diagnostics, not for captured code).

    @property
    def rigid_contact_max(self) -> int:
        """newton's name for :attr:`capacity`."""
        return self.capacity

    def _valid_shapes(self) -> np.ndarray:
        keep = self.valid.numpy() != 0 if self.capacity else np.zeros(0, dtype=bool)
        return self.slot_shapes[keep]

    @property
    def rigid_contact_count(self) -> wp.array:
        """newton's contact count: the number of valid slots, shape [1], int32 (synchronizes with the device)."""
        return wp.array([len(self._valid_shapes())], dtype=wp.int32, device=self.valid.device)

    def _shape_column(self, k: int) -> wp.array:
        out = np.full(self.capacity, -1, dtype=np.int32)
        shapes = self._valid_shapes()
        out[: len(shapes)] = shapes[:, k]
        return wp.array(out, dtype=wp.int32, device=self.valid.device)

    @property
    def rigid_contact_shape0(self) -> wp.array:
        """newton's first shape of each contact: the valid slots' first shapes in slot order, then -1,
        shape [capacity], int32 (synchronizes with the device)."""
        return self._shape_column(0)

    @property
    def rigid_contact_shape1(self) -> wp.array:
        """newton's second shape of each contact, laid out as :attr:`rigid_contact_shape0`."""
        return self._shape_column(1)


def check_contacts(owner: str, arg: str, contacts, model) -> None:
    """As :func:`check_state` for a Contacts buffer. A buffer built by hand (``Contacts(capacity,
    device)``, no stamp) is accepted when its capacity and device match the model's."""
    if not isinstance(contacts, Contacts):
        got = type(contacts).__name__
        raise TypeError(f"{owner}: {arg} must be a Contacts buffer (from pipeline.contacts()) or None, got {got}")
    if contacts._layout is None:
        if contacts.capacity != model.contact_capacity:
            raise ValueError(
                f"{owner}: {arg} has capacity {contacts.capacity}, the model needs {model.contact_capacity}; "
                "create it with pipeline.contacts()"
            )
        if contacts.valid.device != wp.get_device(model.device):
            raise ValueError(f"{owner}: {arg} is on {contacts.valid.device}, the model on {model.device}")
        return
    check_stamped(owner, arg, contacts, "Contacts", model, cls=Contacts)


class CollisionPipeline:
    """Narrow phase over the shape pairs fixed at finalize; graph-capturable, no allocation per call.

    Args:
        model: the finalized Model.
        rigid_contact_margin: distance [m] below which a slot becomes a contact candidate
            (default: the builder's ``rigid_contact_margin``, 0.01 m).
    """

    def __init__(self, model, rigid_contact_margin: float | None = None):
        if not isinstance(model, Model):
            raise TypeError(f"CollisionPipeline: model must be a newton_tendon Model, got {type(model).__name__}")
        self.model = model
        margin = model.rigid_contact_margin if rigid_contact_margin is None else rigid_contact_margin
        if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, (int, float, np.integer, np.floating)):
            raise TypeError(
                f"CollisionPipeline: rigid_contact_margin must be a real number [m], got {type(margin).__name__}"
            )
        if not (np.isfinite(margin) and margin >= 0.0):
            raise ValueError(f"CollisionPipeline: rigid_contact_margin must be finite and >= 0 [m], got {margin}")
        self.rigid_contact_margin = float(margin)

    def contacts(self) -> Contacts:
        """A new contact buffer sized for this model."""
        m = self.model
        slot_shapes = None
        if m.contact_capacity:
            slot_shapes = m.shape_contact_pairs.numpy().reshape(-1, 2)[m.contact_pair.numpy()]
        return Contacts(m.contact_capacity, m.device, slot_shapes, layout=layout_of(m))

    def collide(self, state, contacts: Contacts):
        """Fill ``contacts`` from the body poses of ``state`` (both made for this pipeline's model, or
        one of its layout: checked on the host, TypeError/ValueError otherwise)."""
        m = self.model
        check_state("CollisionPipeline.collide", "state", state, m)
        check_contacts("CollisionPipeline.collide", "contacts", contacts, m)
        if m.contact_capacity == 0:
            return
        wp.launch(
            collide_contact_slots,
            dim=m.contact_capacity,
            inputs=[
                m.shape_type,
                m.shape_body,
                m.shape_transform,
                m.shape_scale,
                m.shape_mu,
                m.shape_restitution,
                m.shape_margin,
                m.shape_gap,
                m.shape_contact_pairs,
                m.shape_contact_pair_mu,
                m.contact_pair,
                m.contact_sub,
                m.shape_mesh_range,
                m.mesh_points,
                self.rigid_contact_margin,
                state.body_q,
            ],
            outputs=[contacts.data()],
            device=m.device,
        )
