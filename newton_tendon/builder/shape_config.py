"""``ModelBuilder.ShapeConfig``: newton's per-shape material and collision settings, and how a shape's
settings are resolved from a config, ``as_site`` and the ``add_shape_*`` keywords.

newton passes a shape's material as one ``ShapeConfig``; our ``add_shape_*`` also take the same
settings as keywords. Both work, and when both are given the keyword wins (the config is the base, a
keyword is the caller's explicit choice for one field). Fields whose physics we do not model raise a
ValueError naming the field when they hold a value other than newton's default; fields that only
matter to features we do not have (particles, visibility, SDF generation) are accepted and have no
effect. docs/migration.md lists each field.
"""

from __future__ import annotations

import copy as _copy
import dataclasses
import math

import numpy as np

from ._checks import _flag, _real


@dataclasses.dataclass(kw_only=True)
class ShapeConfig:
    """Material and collision settings of one shape (newton's ``ModelBuilder.ShapeConfig``).

    Defaults are newton's. Pass one as ``cfg=`` to any ``add_shape_*`` or to ``add_ground_plane``.
    """

    density: float = 1000.0
    """Material density [kg/m^3]; the shape adds ``density * volume`` to its body."""
    ke: float = 2.5e3
    """newton's penalty contact stiffness [N/m]. Our contacts have no stiffness; only the default is accepted."""
    kd: float = 100.0
    """newton's penalty contact damping [N s/m]. Only the default is accepted."""
    kf: float = 1000.0
    """newton's viscous friction gain [N s/m] (penalty solvers). Only the default is accepted."""
    ka: float = 0.0
    """newton's contact adhesion distance [m]. Only 0 (no adhesion) is accepted."""
    mu: float = 1.0
    """Coulomb friction coefficient [-]; a contact uses the mean of its two shapes' values."""
    restitution: float = 0.0
    """Restitution coefficient in [0, 1] [-]; a contact uses the mean of its two shapes' values."""
    mu_torsional: float = 0.005
    """newton's torsional friction [m]. Not modelled; only the default is accepted (and has no effect)."""
    mu_rolling: float = 0.0001
    """newton's rolling friction [m]. Not modelled; only the default is accepted (and has no effect)."""
    margin: float = 0.0
    """Outward offset of the contact surface [m]: two shapes rest ``margin_a + margin_b`` apart."""
    gap: float | None = None
    """Extra contact detection distance [m] (None: 0). A pair's slots become contact candidates below
    ``max(rigid_contact_margin, gap_a + gap_b)`` between the offset surfaces."""
    is_solid: bool = True
    """Solid (True) or hollow shell. Hollow inertia is not modelled; only True is accepted."""
    collision_group: int = 1
    """newton's collision group: 0 collides with nothing; a positive group collides with itself and
    with every negative group; a negative group collides with everything except itself."""
    collision_filter_parent: bool = True
    """Filter contacts with the shapes of bodies joined to this one (the joint's ``collision_filter_parent``
    decides it here); only True is accepted."""
    has_shape_collision: bool = True
    """The shape takes part in shape-shape contacts (our ``has_collision``)."""
    has_particle_collision: bool = True
    """newton's particle contacts; we have no particles, so it has no effect."""
    is_visible: bool = True
    """newton's visibility flag; our viewers draw every shape, so it has no effect."""
    is_site: bool = False
    """A site: a reference shape that neither collides nor has mass. Use :meth:`mark_as_site` (or
    ``as_site=True``) to set it with its invariants."""
    sdf_narrow_band_range: tuple[float, float] | list[float] = (-0.1, 0.1)
    """newton's SDF generation setting; our primitives need no SDF, so it has no effect."""
    sdf_target_voxel_size: float | None = None
    """newton's SDF generation setting; no effect."""
    sdf_max_resolution: int | None = None
    """newton's SDF generation setting; no effect."""
    force_sdf: bool = False
    """newton's SDF generation setting; no effect."""
    sdf_texture_format: str = "uint16"
    """newton's SDF storage setting; no effect."""
    is_hydroelastic: bool = False
    """newton's hydroelastic contacts. Not modelled; only False is accepted."""
    kh: float = 1.0e10
    """newton's hydroelastic stiffness [N/m^3]; only used with ``is_hydroelastic``, so no effect."""
    sdf_padding: float | None = None
    """newton's SDF padding [m]; no effect."""

    def mark_as_site(self) -> None:
        """Make this a site: no shape or particle collision, zero density, collision group 0."""
        self.is_site = True
        self.has_shape_collision = False
        self.has_particle_collision = False
        self.density = 0.0
        self.collision_group = 0

    def configure_sdf(
        self,
        *,
        max_resolution: int | None = None,
        target_voxel_size: float | None = None,
        is_hydroelastic: bool = False,
        kh: float = 1.0e10,
        texture_format: str | None = None,
        force_sdf: bool = False,
    ) -> None:
        """Set newton's SDF fields (stored; they have no effect here, and hydroelastic shapes are rejected
        when the shape is added)."""
        if max_resolution is not None and target_voxel_size is not None:
            raise ValueError("ShapeConfig.configure_sdf: pass max_resolution or target_voxel_size, not both")
        self.force_sdf = force_sdf
        if max_resolution is not None:
            self.sdf_max_resolution, self.sdf_target_voxel_size = max_resolution, None
        if target_voxel_size is not None:
            self.sdf_target_voxel_size, self.sdf_max_resolution = target_voxel_size, None
        self.is_hydroelastic = is_hydroelastic
        self.kh = kh
        if texture_format is not None:
            self.sdf_texture_format = texture_format

    def copy(self) -> ShapeConfig:
        """A shallow copy."""
        return _copy.copy(self)


_DEFAULTS = ShapeConfig()

_UNMODELLED = (
    ("ke", "our contacts are hard constraints (XPBD) or an augmented Lagrangian (VBD) with no stiffness"),
    ("kd", "our contacts have no penalty damping"),
    ("kf", "our friction is Coulomb friction with no viscous gain"),
    ("ka", "contact adhesion is not modelled"),
    ("mu_torsional", "torsional friction is not modelled"),
    ("mu_rolling", "rolling friction is not modelled"),
    ("is_solid", "hollow-shell inertia is not modelled"),
    ("is_hydroelastic", "hydroelastic contact is not modelled"),
    (
        "collision_filter_parent",
        "a joint's collision_filter_parent decides the filter; use add_shape_collision_filter_pair to change it",
    ),
)
"""Fields whose non-default values would change physics we do not model, with the reason."""

OUR_DEFAULTS = {
    "density": 1000.0,
    "mu": 0.5,
    "restitution": 0.0,
    "collision_group": 1,
    "has_collision": True,
    "margin": 0.0,
    "gap": 0.0,
}
"""What a shape gets when neither ``cfg`` nor a keyword sets a field (``mu`` differs from newton's 1.0)."""


_NEWTON_NAME = {"has_collision": "has_shape_collision"}
"""Our keyword -> newton's ShapeConfig field, where they differ."""


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an exotic value that cannot be compared is not the default
        return False


def _group(owner: str, name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be an int")
    v = int(value)
    if not -(2**31) <= v < 2**31:
        raise ValueError(f"{owner}: {name} must fit in int32, got {v}")
    return v


def resolve_shape_settings(owner: str, cfg, as_site, explicit: dict) -> dict:
    """The settings a new shape gets, checked, as a dict with the keys of ``OUR_DEFAULTS`` (``gap`` a float).

    Args:
        owner: the calling ``add_*`` and its label, for messages.
        cfg: a :class:`ShapeConfig` or None.
        as_site: True to make the shape a site (no collision, no mass, group 0), as newton's ``as_site``.
        explicit: the keywords the caller passed (None = not passed), keys as in ``OUR_DEFAULTS`` plus ``mass``.

    Raises:
        TypeError: ``cfg`` is not a ShapeConfig, or a field has the wrong type.
        ValueError: a field is out of range, a field we do not model holds a non-default value, or a
            site is asked to collide or weigh.
    """
    as_site = _flag(owner, "as_site", as_site)
    if cfg is not None and not isinstance(cfg, ShapeConfig):
        raise TypeError(f"{owner}: cfg must be a ModelBuilder.ShapeConfig, got {type(cfg).__name__}")
    out = dict(OUR_DEFAULTS)
    if cfg is not None:
        for name, why in _UNMODELLED:
            value = getattr(cfg, name)
            if not _same(value, getattr(_DEFAULTS, name)):
                raise ValueError(
                    f"{owner}: cfg.{name}={value!r} is not supported ({why}); leave it at newton's default "
                    f"{getattr(_DEFAULTS, name)!r}"
                )
        out.update(
            density=cfg.density,
            mu=cfg.mu,
            restitution=cfg.restitution,
            collision_group=cfg.collision_group,
            has_collision=cfg.has_shape_collision,
            margin=cfg.margin,
            gap=0.0 if cfg.gap is None else cfg.gap,
        )
        if cfg.is_site and not as_site:
            # newton checks a config marked as a site by hand against the site rules.
            bad = [
                (f"cfg.{n}", getattr(cfg, n), want)
                for n, want in (
                    ("has_shape_collision", False),
                    ("has_particle_collision", False),
                    ("density", 0.0),
                    ("collision_group", 0),
                )
                if not _same(getattr(cfg, n), want)
            ]
            if bad:
                n, v, want = bad[0]
                raise ValueError(
                    f"{owner}: cfg.is_site is True but {n}={v!r}; a site neither collides nor has mass "
                    f"(need {want!r}); call cfg.mark_as_site() or pass as_site=True"
                )
    source = {k: (f"cfg.{_NEWTON_NAME.get(k, k)}" if cfg is not None else k) for k in out}
    site = as_site or (cfg is not None and cfg.is_site)
    if site:
        clash = [
            (k, v)
            for k, v in explicit.items()
            if v is not None
            and not (k in ("density", "mass") and v == 0.0)
            and not (k == "has_collision" and v is False)
            and not (k == "collision_group" and v == 0)
            and k in ("density", "mass", "has_collision", "collision_group")
        ]
        if clash:
            k, v = clash[0]
            raise ValueError(f"{owner}: a site neither collides nor has mass, but {k}={v!r} was passed")
        out.update(density=0.0, has_collision=False, collision_group=0)
    for k, v in explicit.items():
        if v is not None and k in out:
            out[k] = v
            source[k] = k
    label = source
    out["density"] = _real(owner, label["density"], out["density"], lo=0.0)
    out["mu"] = _real(owner, label["mu"], out["mu"], lo=0.0)
    out["restitution"] = _real(owner, label["restitution"], out["restitution"], lo=0.0)
    if out["restitution"] > 1.0:
        raise ValueError(f"{owner}: {label['restitution']} must be <= 1, got {out['restitution']}")
    out["collision_group"] = _group(owner, label["collision_group"], out["collision_group"])
    out["has_collision"] = _flag(owner, label["has_collision"], out["has_collision"])
    out["margin"] = _real(owner, label["margin"], out["margin"], lo=0.0)
    out["gap"] = _real(owner, label["gap"], out["gap"], lo=0.0)
    out["site"] = site
    return out


def check_color(owner: str, color, opacity) -> None:
    """newton's display ``color`` (three numbers in [0, 1]) and ``opacity`` (in [0, 1]); checked, not stored."""
    if color is not None:
        try:
            vals = [float(c) for c in color]
        except (TypeError, ValueError):
            raise TypeError(f"{owner}: color must be three numbers in [0, 1], got {color!r}") from None
        if len(vals) != 3 or not all(0.0 <= c <= 1.0 for c in vals):
            raise ValueError(f"{owner}: color must be three numbers in [0, 1], got {color!r}")
    if opacity is not None:
        v = _real(owner, "opacity", opacity, lo=0.0)
        if v > 1.0:
            raise ValueError(f"{owner}: opacity must be <= 1, got {v}")
