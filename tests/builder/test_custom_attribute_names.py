"""Custom attributes under newton's names: ``Model.AttributeFrequency``, ``Model.AttributeAssignment``,
``ModelBuilder.CustomAttribute`` with ``namespace``, ``assignment`` (model, state, control), ``values`` and
Warp dtypes; ``Model.body_color_groups``; and an undeclared attribute raising newton's AttributeError too."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import AttributeAssignment, AttributeFrequency, CustomAttribute, ModelBuilder, TendonGuide
from newton_tendon.exceptions import UndeclaredAttributeError


def test_newton_names_are_ours():
    """newton's nested names are our classes, and the frequency numbers are newton's."""
    assert nt.Model.AttributeFrequency is AttributeFrequency
    assert nt.Model.AttributeAssignment is AttributeAssignment
    assert ModelBuilder.CustomAttribute is CustomAttribute
    # newton 1.8's numbering, so an int written for newton names the same domain.
    assert [int(f) for f in AttributeFrequency] == [1, 5, 6, 20, 21, 22]
    assert [int(a) for a in AttributeAssignment] == [0, 1, 2]


def two_body_cable() -> ModelBuilder:
    b = ModelBuilder()
    a = b.add_body(mass=1.0, inertia=np.eye(3))
    c = b.add_body(xform=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3))
    b.add_tendon([TendonGuide(body=a), TendonGuide(body=c)])
    return b


def test_assignments_place_arrays_on_model_state_and_control():
    """MODEL arrays are model attributes; STATE/CONTROL ones are copies on each state/control, copied by assign."""
    b = two_body_cable()
    b.add_custom_attribute(CustomAttribute(name="mass_tag", frequency=AttributeFrequency.BODY, dtype=wp.float32))
    b.add_custom_attribute(
        CustomAttribute(
            name="heat",
            namespace="th",
            frequency=AttributeFrequency.TENDON,
            assignment=AttributeAssignment.STATE,
            default=3.0,
        )
    )
    b.add_custom_attribute(
        CustomAttribute(
            name="cmd",
            frequency=AttributeFrequency.TENDON_GUIDE,
            assignment=AttributeAssignment.CONTROL,
            dtype=wp.vec3,
            values={1: (1.0, 2.0, 3.0)},
        )
    )
    b.set_custom_attribute("mass_tag", 1, 5.0)
    m = b.finalize("cpu")
    np.testing.assert_array_equal(m.mass_tag.numpy(), [0.0, 5.0])
    assert m.custom_attributes["mass_tag"] is m.mass_tag
    assert m.custom_attribute_assignment["th:heat"] == AttributeAssignment.STATE
    s0, s1 = m.state(), m.state()
    np.testing.assert_array_equal(s0.th.heat.numpy(), [3.0])
    assert s0.th.heat.ptr != s1.th.heat.ptr  # each state owns its copy
    s0.th.heat.fill_(7.0)
    s1.assign(s0)
    np.testing.assert_array_equal(s1.th.heat.numpy(), [7.0])
    c = m.control()
    np.testing.assert_array_equal(c.cmd.numpy(), [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    assert not hasattr(m, "cmd") and not hasattr(s0, "cmd")


def test_namespaced_values_are_authored_by_key_and_survive_replicate():
    """A namespaced attribute is authored as "ns:name"; replicate shifts its span references per copy."""
    src = ModelBuilder()
    src.add_custom_attribute(
        CustomAttribute(
            name="peer",
            namespace="t",
            dtype=int,
            frequency=AttributeFrequency.TENDON_SEGMENT,
            references=AttributeFrequency.TENDON_SEGMENT,
            default=-1,
        )
    )
    a = src.add_body(mass=1.0, inertia=np.eye(3))
    src.add_tendon(
        [TendonGuide(body=a), TendonGuide(body=a, offset=(1.0, 0.0, 0.0), segment_custom_attributes={"t:peer": 0})]
    )
    b = ModelBuilder()
    b.replicate(src, 2)
    m = b.finalize("cpu")
    np.testing.assert_array_equal(m.t.peer.numpy(), [0, 1])
    assert b.custom_attributes["t:peer"].values == {0: 0, 1: 1}
    assert m.get_attribute_frequency("t:peer") == AttributeFrequency.TENDON_SEGMENT


def test_builder_keeps_its_own_values():
    """Declaring one CustomAttribute object in two builders gives each builder its own value dict."""
    decl = CustomAttribute(name="w", frequency=AttributeFrequency.BODY)
    b1, b2 = two_body_cable(), two_body_cable()
    b1.add_custom_attribute(decl)
    b2.add_custom_attribute(decl)
    b1.set_custom_attribute("w", 0, 2.0)
    assert b1.custom_attributes["w"].values == {0: 2.0}
    assert b2.custom_attributes["w"].values == {}
    assert decl.values is None


def test_undeclared_attribute_is_value_and_attribute_error():
    """An undeclared name raises our ValueError, which is also newton's AttributeError ('not defined')."""
    b = two_body_cable()
    with pytest.raises(AttributeError, match=r"custom attribute 'missing' is not declared \(not defined"):
        b.add_tendon([TendonGuide(body=0), TendonGuide(body=1)], custom_attributes={"missing": 1})
    with pytest.raises(UndeclaredAttributeError) as info:
        b.set_custom_attribute("missing", 0, 1.0)
    assert isinstance(info.value, ValueError)
    assert b.tendon_count == 1


def test_custom_attribute_that_would_hide_a_field_is_refused():
    """A MODEL attribute named like a Model field is refused at finalize; a namespace avoids the clash."""
    b = two_body_cable()
    b.add_custom_attribute(CustomAttribute(name="body_mass", frequency=AttributeFrequency.BODY))
    with pytest.raises(ValueError, match=r"finalize: custom attribute 'body_mass' would hide Model\.body_mass"):
        b.finalize("cpu")
    b = two_body_cable()
    b.add_custom_attribute(CustomAttribute(name="body_mass", namespace="mine", frequency=AttributeFrequency.BODY))
    assert b.finalize("cpu").mine.body_mass.shape == (2,)


def test_attribute_spec_of_builtin_arrays():
    """Built-in arrays report their frequency and the domain their values index."""
    m = two_body_cable().finalize("cpu")
    assert m.get_attribute_frequency("tendon_start") == AttributeFrequency.TENDON
    assert m.get_attribute_frequency("tendon_guide_offset") == AttributeFrequency.TENDON_GUIDE
    assert m.get_attribute_frequency("body_q") == AttributeFrequency.BODY
    assert m._attribute_frequency_count(AttributeFrequency.TENDON_GUIDE) == 2
    assert m._attribute_spec("tendon_guide_body").references == AttributeFrequency.BODY
    assert m._attribute_spec("nothing") is None
    with pytest.raises(KeyError, match="nothing"):
        m.get_attribute_frequency("nothing")


def test_body_color_groups_round_trip():
    """body_color_groups lists each colour's bodies; assigning groups sets body_color (unlisted bodies: -1)."""
    b = two_body_cable()
    b.add_body(mass=1.0, inertia=np.eye(3))
    b.color()
    m = b.finalize("cpu")
    colours = m.body_color.numpy()
    groups = m.body_color_groups
    assert len(groups) == m.body_color_count
    for c, g in enumerate(groups):
        np.testing.assert_array_equal(g.numpy(), np.nonzero(colours == c)[0])
    m.body_color_groups = [[2], wp.array([0], dtype=wp.int32)]
    np.testing.assert_array_equal(m.body_color.numpy(), [1, -1, 0])
    assert m.body_color_count == 2


@pytest.mark.parametrize(
    ("groups", "exc", "match"),
    [
        (5, TypeError, r"Model\.body_color_groups: expected a list of body index arrays"),
        ([[0], [0]], ValueError, r"body 0 is in more than one group"),
        ([[0, 0]], ValueError, r"body 0 is in more than one group"),
        ([[7]], ValueError, r"group 0 has body index 7"),
        ([[0.5]], TypeError, r"group 0 must hold int body indices"),
    ],
)
def test_body_color_groups_rejects_bad_groups(groups, exc, match):
    m = two_body_cable().finalize("cpu")
    before = m.body_color.numpy().copy()
    with pytest.raises(exc, match=match):
        m.body_color_groups = groups
    np.testing.assert_array_equal(m.body_color.numpy(), before)


def test_vbd_rejects_groups_that_do_not_separate_cable_endpoints():
    """SolverVBD checks hand-set groups: two moving bodies of one cable in one colour race (newton's phrase)."""
    b = two_body_cable()
    b.color()
    m = b.finalize("cpu")
    nt.solvers.SolverVBD(m, iterations=1)
    m.body_color_groups = [wp.array([0, 1], dtype=wp.int32)]
    with pytest.raises(ValueError, match="does not separate tendon segment endpoints"):
        nt.solvers.SolverVBD(m, iterations=1)


def test_native_format_keeps_namespace_and_assignment():
    """save/load keeps a namespaced STATE attribute; a document without the new fields reads as MODEL."""
    from newton_tendon.io.native import from_dict, to_dict

    b = two_body_cable()
    b.add_custom_attribute(
        CustomAttribute(
            name="h", namespace="t", frequency=AttributeFrequency.TENDON, assignment=AttributeAssignment.STATE
        )
    )
    b.set_custom_attribute("t:h", 0, 2.5)
    doc = to_dict(b)
    back = from_dict(doc)
    assert back.custom_attributes["t:h"] == b.custom_attributes["t:h"]
    assert back.custom_attributes["t:h"].values == {0: 2.5}
    np.testing.assert_array_equal(back.finalize("cpu").state().t.h.numpy(), [2.5])
    for entry in doc["custom_attributes"]:
        del entry["namespace"], entry["assignment"]
    old = from_dict(doc)
    assert old.custom_attributes["h"].assignment == AttributeAssignment.MODEL
