"""newton's ``ModelBuilder.ShapeConfig``, ``cfg=`` and ``as_site=`` on ``add_shape_*`` / ``add_ground_plane``
(issue 26): fields reach the builder and the Model, an explicit keyword wins over ``cfg``, sites neither collide
nor weigh, fields we do not model raise by name, and bad values raise ValueError/TypeError naming the field."""

import dataclasses
import math

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import CollisionPipeline, ModelBuilder

from .builder_common import dynamic_body

ShapeConfig = ModelBuilder.ShapeConfig


def test_shape_config_is_newtons_dataclass():
    """ShapeConfig is a keyword-only dataclass on ModelBuilder with newton's defaults for the fields we read."""
    assert dataclasses.is_dataclass(ShapeConfig)
    cfg = ShapeConfig()
    assert (cfg.density, cfg.mu, cfg.restitution, cfg.margin, cfg.gap) == (1000.0, 1.0, 0.0, 0.0, None)
    assert (cfg.collision_group, cfg.has_shape_collision, cfg.has_particle_collision, cfg.is_visible) == (1, True, True, True)
    assert cfg.is_site is False and cfg.is_solid is True
    with pytest.raises(TypeError):
        ShapeConfig(1000.0)  # keyword-only, as newton's
    c = cfg.copy()
    c.mu = 0.3
    assert cfg.mu == 1.0


def test_cfg_fields_reach_builder_and_model(device):
    """density sets the body mass (rho * 4/3 pi r^3), mu/restitution/margin/gap/collision_group/has_shape_collision
    land in the builder lists and the Model arrays."""
    b = ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 1.0, 0, 0, 0, 1))
    cfg = ShapeConfig(density=500.0, mu=0.25, restitution=0.5, margin=0.01, gap=0.02, collision_group=3)
    b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=ShapeConfig(density=0.0, has_shape_collision=False))
    assert b.body_mass[body] == pytest.approx(500.0 * 4.0 / 3.0 * math.pi * 0.1**3)
    assert b.shape_mu == [0.25, 1.0] and b.shape_restitution == [0.5, 0.0]
    assert b.shape_margin == [0.01, 0.0] and b.shape_gap == [0.02, 0.0]
    assert b.shape_collision_group == [3, 1] and b.shape_has_collision == [True, False]
    m = b.finalize(device=device)
    np.testing.assert_allclose(m.shape_mu.numpy(), [0.25, 1.0])
    np.testing.assert_allclose(m.shape_restitution.numpy(), [0.5, 0.0])
    np.testing.assert_allclose(m.shape_margin.numpy(), [0.01, 0.0])
    np.testing.assert_allclose(m.shape_gap.numpy(), [0.02, 0.0])
    np.testing.assert_array_equal(m.shape_collision_group.numpy(), [3, 1])


def test_explicit_keyword_wins_over_cfg():
    """A keyword passed with cfg overrides that field only; without either the defaults apply (mu 0.5, ours)."""
    b = ModelBuilder()
    body = b.add_body()
    cfg = ShapeConfig(mu=0.2, restitution=0.3, density=0.0)
    b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    b.add_shape_sphere(body, radius=0.1, cfg=cfg, mu=0.8, collision_group=-1, has_collision=False)
    b.add_shape_sphere(body, radius=0.1, density=0.0)
    assert b.shape_mu == [0.2, 0.8, 0.5]
    assert b.shape_restitution == [0.3, 0.3, 0.0]
    assert b.shape_collision_group == [1, -1, 1]
    assert b.shape_has_collision == [True, False, True]
    assert b.body_mass[body] == 0.0
    assert cfg.mu == 0.2  # the caller's config is not changed


def test_ground_plane_takes_cfg(device):
    """add_ground_plane(cfg=ShapeConfig(collision_group=-1)) (newton's capstan example) collides with shapes of
    any positive group; with the default group 1 it misses a shape of group 2."""
    for ground_group, pairs in ((-1, 1), (1, 0)):
        b = ModelBuilder()
        dynamic_body(b, (0.0, 0.0, 1.0))
        b.add_shape_sphere(0, radius=0.1, collision_group=2)
        b.add_ground_plane(cfg=ShapeConfig(collision_group=ground_group, mu=0.9))
        assert b.shape_mu[-1] == 0.9 and b.shape_label[-1] == "ground"
        assert b.finalize(device=device).shape_contact_pair_count == pairs


@pytest.mark.parametrize("how", ["as_site", "as_site-with-cfg", "mark_as_site"])
def test_sites_neither_collide_nor_weigh(device, how):
    """A site (as_site=True, also over a cfg with density, or a cfg marked with mark_as_site) adds no mass and
    no contact pair, not even with the ground; it keeps its pose for reference."""
    b = ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 0.05, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3))
    b.add_ground_plane()
    xf = (0.0, 0.0, 0.1, 0, 0, 0, 1)
    if how == "as_site":
        s = b.add_shape_sphere(body, xf, radius=0.2, as_site=True)
    elif how == "as_site-with-cfg":
        s = b.add_shape_box(body, xf, 0.2, 0.2, 0.2, cfg=ShapeConfig(density=5000.0, collision_group=4), as_site=True)
    else:
        cfg = ShapeConfig(density=5000.0)
        cfg.mark_as_site()
        s = b.add_shape_cylinder(body, xf, radius=0.2, half_height=0.1, cfg=cfg)
    assert b.body_mass[body] == 1.0
    assert b.shape_has_collision[s] is False and b.shape_collision_group[s] == 0
    assert b.shape_transform[s][:3] == (0.0, 0.0, 0.1)
    assert b.finalize(device=device).shape_contact_pair_count == 0


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"density": 10.0}, r"density=10.0"),
        ({"mass": 1.0}, r"mass=1.0"),
        ({"has_collision": True}, r"has_collision=True"),
        ({"collision_group": 2}, r"collision_group=2"),
    ],
)
def test_site_with_contradicting_keyword_raises(kw, match):
    """as_site=True with an explicit keyword that would make it collide or weigh is a ValueError naming it."""
    b = ModelBuilder()
    body = b.add_body()
    with pytest.raises(ValueError, match=r"add_shape_sphere\(label='s'\): a site neither collides nor has mass, but " + match):
        b.add_shape_sphere(body, radius=0.1, as_site=True, label="s", **kw)


def test_hand_marked_site_is_checked():
    """cfg.is_site=True set by hand (not through mark_as_site) with collision left on raises, naming the field."""
    b = ModelBuilder()
    body = b.add_body()
    with pytest.raises(ValueError, match=r"cfg.is_site is True but cfg.has_shape_collision=True"):
        b.add_shape_sphere(body, cfg=ShapeConfig(is_site=True))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("ke", 1.0e4),
        ("kd", 10.0),
        ("kf", 1.0),
        ("ka", 0.01),
        ("mu_torsional", 0.1),
        ("mu_rolling", 0.1),
        ("is_solid", False),
        ("is_hydroelastic", True),
        ("collision_filter_parent", False),
    ],
)
def test_unmodelled_fields_raise_by_name(field, value):
    """A non-default value of a field whose physics we do not model is a ValueError naming ``cfg.<field>``; the
    builder is unchanged."""
    b = ModelBuilder()
    body = b.add_body()
    with pytest.raises(ValueError, match=rf"add_shape_box\(label=None\): cfg\.{field}={value!r} is not supported"):
        b.add_shape_box(body, cfg=ShapeConfig(**{field: value}))
    assert b.shape_count == 0 and b.body_mass[body] == 0.0


def test_fields_without_effect_are_accepted():
    """Particle collision, visibility and SDF settings do not matter to our primitives: accepted, no effect."""
    b = ModelBuilder()
    body = b.add_body()
    cfg = ShapeConfig(has_particle_collision=False, is_visible=False, sdf_max_resolution=64, kh=1.0)
    cfg.configure_sdf(target_voxel_size=0.01)
    b.add_shape_sphere(body, cfg=cfg, color=(0.1, 0.2, 0.3), opacity=0.5)
    assert b.shape_count == 1 and b.shape_has_collision == [True]


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda b: b.add_shape_sphere(0, cfg={"mu": 0.1}), TypeError, r"cfg must be a ModelBuilder.ShapeConfig"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(mu=-1.0)), ValueError, r"cfg\.mu must be >= 0"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(restitution=2.0)), ValueError, r"cfg\.restitution must be <= 1"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(density=math.nan)), ValueError, r"cfg\.density must be finite"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(collision_group=1.5)), TypeError, r"cfg\.collision_group must be an int"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(has_shape_collision=1)), TypeError, r"cfg\.has_shape_collision must be a bool"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(margin=-0.1)), ValueError, r"cfg\.margin must be >= 0"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(gap=math.inf)), ValueError, r"cfg\.gap must be finite"),
        (lambda b: b.add_shape_sphere(0, cfg=ShapeConfig(), mu="a"), TypeError, r": mu must be a real number"),
        (lambda b: b.add_shape_sphere(0, margin=-1.0), ValueError, r": margin must be >= 0"),
        (lambda b: b.add_shape_sphere(0, collision_group=2**31), ValueError, r"collision_group must fit in int32"),
        (lambda b: b.add_shape_sphere(0, as_site=1), TypeError, r"as_site must be a bool"),
        (lambda b: b.add_shape_sphere(0, color=(2.0, 0.0, 0.0)), ValueError, r"color must be three numbers in \[0, 1\]"),
        (lambda b: b.add_shape_sphere(0, color="red"), TypeError, r"color must be three numbers"),
        (lambda b: b.add_shape_sphere(0, opacity=1.5), ValueError, r"opacity must be <= 1"),
        (lambda b: b.add_ground_plane(cfg=ShapeConfig(ke=1.0)), ValueError, r"add_(ground|shape)_plane\(label='ground'\): cfg\.ke"),
    ],
)  # fmt: skip
def test_bad_values_raise_naming_the_field(call, exc, match):
    """Wrong types are TypeErrors, out-of-range values ValueErrors; both name the call and the field (``cfg.<field>``
    when the value came from the config), and the builder is unchanged."""
    b = ModelBuilder()
    b.add_body()
    with pytest.raises(exc, match=match):
        call(b)
    assert b.shape_count == 0


def test_gap_widens_detection(device):
    """A sphere 5 cm above the ground is a contact candidate only when gap_a + gap_b (or the builder's
    rigid_contact_margin, 1 cm) exceeds 5 cm: gap 0.03 + 0.03 makes it one, 0.02 + 0.02 does not; margins count
    as surface, so margin 0.045 on the sphere leaves 5 mm to detect, below the 1 cm default."""

    def candidates(sphere_cfg, ground_cfg):
        b = ModelBuilder()
        body = b.add_body(xform=(0.0, 0.0, 0.15, 0, 0, 0, 1))
        b.add_shape_sphere(body, radius=0.1, cfg=sphere_cfg)
        b.add_ground_plane(cfg=ground_cfg)
        m = b.finalize(device=device)
        pipe = CollisionPipeline(m)
        contacts = pipe.contacts()
        pipe.collide(m.state(), contacts)
        return contacts.count()

    assert candidates(ShapeConfig(gap=0.03), ShapeConfig(gap=0.03)) == 1
    assert candidates(ShapeConfig(gap=0.02), ShapeConfig(gap=0.02)) == 0
    assert candidates(ShapeConfig(margin=0.045), ShapeConfig()) == 1
    assert candidates(ShapeConfig(), ShapeConfig()) == 0


def test_native_format_keeps_margin_and_gap(tmp_path):
    """save -> load keeps each shape's margin and gap; a document without them (written before) loads with 0."""
    import json

    b = ModelBuilder()
    body = b.add_body()
    b.add_shape_sphere(body, cfg=ShapeConfig(margin=0.01, gap=0.02))
    path = tmp_path / "s.json"
    nt.io.save(b, path)
    loaded = nt.io.load(path)
    assert loaded.shape_margin == [0.01] and loaded.shape_gap == [0.02]
    doc = json.loads(path.read_text())
    for shape in doc["shapes"]:
        del shape["margin"], shape["gap"]
    path.write_text(json.dumps(doc))
    old = nt.io.load(path)
    assert old.shape_margin == [0.0] and old.shape_gap == [0.0]


def test_newton_contact_list_views(device):
    """newton's compacted contact list (rigid_contact_count, rigid_contact_shape0/1) lists the shapes of the valid
    slots in slot order: a sphere resting on the ground gives one contact (ground, sphere); lifted, none."""
    b = ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 0.1, 0, 0, 0, 1))
    ball = b.add_shape_sphere(body, radius=0.1)
    ground = b.add_ground_plane()
    m = b.finalize(device=device)
    pipe = CollisionPipeline(m)
    contacts = pipe.contacts()
    state = m.state()
    pipe.collide(state, contacts)
    assert contacts.rigid_contact_max == contacts.capacity == 1
    assert contacts.rigid_contact_count.numpy().tolist() == [1]
    assert contacts.rigid_contact_shape0.numpy().tolist() == [ground]
    assert contacts.rigid_contact_shape1.numpy().tolist() == [ball]
    q = state.body_q.numpy()
    q[0, 2] = 1.0
    state.body_q.assign(q)
    pipe.collide(state, contacts)
    assert contacts.rigid_contact_count.numpy().tolist() == [0]
    assert contacts.rigid_contact_shape0.numpy().tolist() == [-1]
