"""Contact generation: a fixed-capacity Contacts buffer and the CollisionPipeline that fills it."""

from __future__ import annotations

import warp as wp

from newton_tendon.kernels.contacts import ContactData, collide_contact_slots


class Contacts:
    """Contact candidates of one step, one entry per slot; slot ranges per shape pair are fixed at finalize.

    Create with :meth:`CollisionPipeline.contacts`.
    """

    def __init__(self, capacity: int, device):
        self.capacity = capacity
        """Number of contact slots."""
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

        self._data = ContactData()
        for name in ("valid", "body_a", "body_b", "point_a", "point_b", "normal", "mu", "restitution"):
            setattr(self._data, name, getattr(self, name))

    def data(self) -> ContactData:
        """The buffer as the struct kernels take (built once; arrays are edited in place)."""
        return self._data

    def count(self) -> int:
        """Number of valid contacts (synchronizes with the device; not for captured code)."""
        return int(self.valid.numpy().sum()) if self.capacity else 0


class CollisionPipeline:
    """Narrow phase over the shape pairs fixed at finalize; graph-capturable, no allocation per call.

    Args:
        model: the finalized Model.
        rigid_contact_margin: distance [m] below which a slot becomes a contact candidate
            (default: the builder's ``rigid_contact_margin``, 0.01 m).
    """

    def __init__(self, model, rigid_contact_margin: float | None = None):
        self.model = model
        margin = model.rigid_contact_margin if rigid_contact_margin is None else rigid_contact_margin
        if not (margin >= 0.0):
            raise ValueError(f"CollisionPipeline: rigid_contact_margin must be >= 0, got {margin}")
        self.rigid_contact_margin = float(margin)

    def contacts(self) -> Contacts:
        """A new contact buffer sized for this model."""
        return Contacts(self.model.contact_capacity, self.model.device)

    def collide(self, state, contacts: Contacts):
        """Fill ``contacts`` from the body poses of ``state``."""
        m = self.model
        if contacts.capacity != m.contact_capacity:
            raise ValueError(
                f"CollisionPipeline.collide: contacts has capacity {contacts.capacity}, "
                f"the model needs {m.contact_capacity}; create it with pipeline.contacts()"
            )
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
                m.contact_pair,
                m.contact_sub,
                self.rigid_contact_margin,
                state.body_q,
            ],
            outputs=[contacts.data()],
            device=m.device,
        )
