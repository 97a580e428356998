"""newton 1.8's SolverVBD ``rigid_*`` options (issue 26): the ones that select what our VBD always does,
and newton's deprecated legacy penalty seeds and ramps, are accepted with one NewtonDeprecationWarning, as
newton warns for them; its joint damping is accepted silently; the rest are rejected by name.

Our VBD has one formulation (docs/vbd.md): augmented-Lagrangian hard rows whose penalty is relative to
the row's inertia, ``k = rho m_eff / dt^2``, growing from ``penalty_min``. newton's legacy penalty seeds
and ramp rates are absolute [N/m], so none converts to one of our parameters: they have no effect (the
rows reach their constraints whatever the seed), which the warning says. newton's own tendon tests pass
them (newton/tests/test_tendon_vbd.py, TENDON_VBD_SOLVER_KWARGS) and expect exactly that one warning.
"""

import warnings

import numpy as np
import pytest

import newton_tendon
from newton_tendon import ModelBuilder, NewtonDeprecationWarning, TendonGuide
from newton_tendon.solvers import SolverVBD


def _model():
    b = ModelBuilder()
    body = b.add_body(mass=1.0)
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=body)])
    b.color()
    return b.finalize()


def test_warning_category_matches_newtons():
    """newton 1.8: ``newton.NewtonDeprecationWarning`` subclasses DeprecationWarning and not UserWarning."""
    assert newton_tendon.NewtonDeprecationWarning is NewtonDeprecationWarning
    assert "NewtonDeprecationWarning" in newton_tendon.__all__
    assert issubclass(NewtonDeprecationWarning, DeprecationWarning)
    assert not issubclass(NewtonDeprecationWarning, UserWarning)


@pytest.mark.parametrize(
    ("options", "listed"),
    [
        ({"rigid_compliant_alm": False}, "rigid_compliant_alm=False"),
        ({"rigid_contact_hard": True}, "rigid_contact_hard"),
        ({"rigid_contact_hard": True, "rigid_compliant_alm": False}, "rigid_compliant_alm=False, rigid_contact_hard"),
        # newton's tendon tests' solver options: one warning naming the deprecated ones in order; the
        # joint damping (not deprecated in newton) is not listed.
        (
            {
                "rigid_compliant_alm": False,
                "rigid_avbd_beta": 1.0e6,
                "rigid_joint_linear_k_start": 1.0e7,
                "rigid_joint_angular_k_start": 1.0e5,
                "rigid_joint_linear_kd": 5.0e-2,
                "rigid_joint_angular_kd": 2.0e-2,
            },
            "rigid_compliant_alm=False, rigid_avbd_beta, rigid_joint_linear_k_start, rigid_joint_angular_k_start",
        ),
        ({"rigid_contact_k_start": 1.0e5, "rigid_avbd_linear_beta": 1.0, "rigid_avbd_angular_beta": 2.0},
         "rigid_contact_k_start, rigid_avbd_linear_beta, rigid_avbd_angular_beta"),
    ],
)
def test_accepted_deprecated_options_warn_once_and_change_nothing(options, listed):
    model = _model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver = SolverVBD(model, iterations=4, **options)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1
    w = deprecations[0]
    assert w.category is NewtonDeprecationWarning
    text = str(w.message)
    # newton's opening, then ours: what the option does here.
    assert text.startswith(f"VBD options {listed} are deprecated")
    assert "no effect" in text and "penalty_min" in text
    assert w.filename == __file__  # stacklevel points at the caller's SolverVBD(...) line

    # No effect: the same step as a solver built without them (bitwise; same kernels, same inputs).
    plain = SolverVBD(model, iterations=4)
    out = []
    for s in (solver, plain):
        s0, s1 = model.state(), model.state()
        for _ in range(3):
            s.step(s0, s1, model.control(), None, 1.0 / 60.0)
            s0, s1 = s1, s0
        out.append(s0.body_q.numpy())
    np.testing.assert_array_equal(out[0], out[1])


def test_newtons_default_alm_flag_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SolverVBD(_model(), rigid_compliant_alm=True)


def test_joint_damping_is_accepted_silently_and_changes_nothing():
    """newton's rigid_joint_*_kd damp its joint penalty springs; our joint rows are hard, so there is no
    spring to damp: accepted without a warning, and the step is bitwise the one without them."""
    b = ModelBuilder()
    link = b.add_link(xform=(0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0)
    b.add_joint_revolute(-1, link, child_xform=(-0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), axis=(0.0, 1.0, 0.0))
    b.color()
    model = b.finalize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        damped = SolverVBD(model, rigid_joint_linear_kd=5.0e-2, rigid_joint_angular_kd=2.0e-2)
    out = []
    for s in (damped, SolverVBD(model)):
        s0, s1 = model.state(), model.state()
        for _ in range(5):
            s.step(s0, s1, model.control(), None, 1.0 / 60.0)
            s0, s1 = s1, s0
        out.append(s0.body_q.numpy())
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("name", ["rigid_avbd_beta", "rigid_joint_linear_kd"])
@pytest.mark.parametrize(("value", "exc"), [(-1.0, ValueError), (float("nan"), ValueError), ("1", TypeError)])
def test_accepted_numeric_options_still_check_their_value(name, value, exc):
    with pytest.raises(exc, match=rf"SolverVBD: newton's option {name} must be"):
        SolverVBD(_model(), **{name: value})


@pytest.mark.parametrize("name", ["rigid_avbd_gamma", "rigid_joint_linear_ke", "rigid_contact_history"])
def test_other_newton_rigid_options_rejected_by_name(name):
    with pytest.raises(TypeError, match=rf"SolverVBD: newton's option {name} has no counterpart"):
        SolverVBD(_model(), **{name: 1.0})


def test_bad_values_and_unknown_keywords():
    model = _model()
    with pytest.raises(ValueError, match=r"rigid_contact_hard=False \(penalty-only contacts\) is not supported"):
        SolverVBD(model, rigid_contact_hard=False)
    with pytest.raises(TypeError, match="rigid_compliant_alm must be True or False, got NoneType"):
        SolverVBD(model, rigid_compliant_alm=None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'rigid_typo'"):
        SolverVBD(model, rigid_typo=1)


def test_rejection_comes_before_the_warning():
    """A rejected option raises even with deprecations turned into errors (the warning is issued last)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="rigid_avbd_gamma"):
            SolverVBD(_model(), rigid_compliant_alm=False, rigid_avbd_beta=1.0e6, rigid_avbd_gamma=0.9)


def test_our_names_stay_primary():
    solver = SolverVBD(_model(), penalty_growth=10.0, rigid_compliant_alm=True)
    assert solver._params.growth == 10.0
