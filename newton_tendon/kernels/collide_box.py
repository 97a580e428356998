"""Narrow phase: box against box, by the separating-axis test and face clipping.

The 6 face axes and 9 edge-cross axes are tested; a face axis gives a reference face whose clipped
contact polygon fills slots 0-23, an edge axis the closest points of two support edges in slot 24
(``collide`` gives the full slot layout).
"""

import warp as wp

from newton_tendon.kernels.collide_common import (
    _BOX_TOL_REL,
    _EDGE_AXIS_BIAS,
    _LENGTH_EPS,
    _PARALLEL_SIN,
    _column,
    _empty_contact,
    _make_contact,
    _segment_segment_params,
    _sign,
)

wp.set_module_options({"enable_backward": False})


@wp.func
def _box_axis_separation(
    axis: wp.vec3, d: wp.vec3, rot_a: wp.mat33, half_a: wp.vec3, rot_b: wp.mat33, half_b: wp.vec3
) -> float:
    """Gap between the projections of two boxes onto a unit axis (negative when they overlap on it)."""
    ra = 0.0
    rb = 0.0
    for k in range(3):
        ra += half_a[k] * wp.abs(wp.dot(_column(rot_a, k), axis))
        rb += half_b[k] * wp.abs(wp.dot(_column(rot_b, k), axis))
    return wp.abs(wp.dot(d, axis)) - ra - rb


@wp.func
def _face_corner(center: wp.vec3, u1: wp.vec3, e1: float, u2: wp.vec3, e2: float, k: int) -> wp.vec3:
    """Corner ``k`` (0-3, counter-clockwise in the (u1, u2) plane) of a rectangle."""
    s1 = 1.0
    s2 = 1.0
    if k == 1 or k == 2:
        s1 = -1.0
    if k >= 2:
        s2 = -1.0
    return center + s1 * e1 * u1 + s2 * e2 * u2


@wp.func
def _box_box(xform_a: wp.transform, half_a: wp.vec3, xform_b: wp.transform, half_b: wp.vec3, slot: int, margin: float):
    """Box against box; see the module table for the slot layout."""
    rot_a = wp.quat_to_matrix(wp.transform_get_rotation(xform_a))
    rot_b = wp.quat_to_matrix(wp.transform_get_rotation(xform_b))
    ca = wp.transform_get_translation(xform_a)
    cb = wp.transform_get_translation(xform_b)
    d = cb - ca
    size = half_a[0] + half_a[1] + half_a[2] + half_b[0] + half_b[1] + half_b[2]
    tol = _BOX_TOL_REL * size + _LENGTH_EPS

    # Face axes: 0-2 belong to a, 3-5 to b. b's faces must beat a's by tol, so parallel faces pick a stably.
    best_face_sep = -1.0e30
    best_face = 0
    for i in range(6):
        axis = _column(rot_a, i % 3)
        bias = 0.0
        if i >= 3:
            axis = _column(rot_b, i - 3)
            bias = tol
        s = _box_axis_separation(axis, d, rot_a, half_a, rot_b, half_b)
        if i == 0 or s > best_face_sep + bias:
            best_face_sep = s
            best_face = i

    # Edge-cross axes; (nearly) parallel edge pairs give no axis.
    best_edge_sep = -1.0e30
    best_edge = -1
    for e in range(9):
        cross = wp.cross(_column(rot_a, e // 3), _column(rot_b, e % 3))
        length = wp.length(cross)
        if length > _PARALLEL_SIN:
            s = _box_axis_separation(cross / length, d, rot_a, half_a, rot_b, half_b)
            if s > best_edge_sep:
                best_edge_sep = s
                best_edge = e

    empty = _empty_contact()
    if wp.max(best_face_sep, best_edge_sep) > margin:
        return empty  # a separating axis with a gap above the margin: no contact at all
    edge_mode = best_edge >= 0 and best_edge_sep > best_face_sep + _EDGE_AXIS_BIAS * wp.abs(best_face_sep) + tol

    if slot == 24:
        if not edge_mode:
            return empty
        ia = best_edge // 3
        ib = best_edge % 3
        dir_a = _column(rot_a, ia)
        dir_b = _column(rot_b, ib)
        n = wp.normalize(wp.cross(dir_a, dir_b))
        if wp.dot(n, d) < 0.0:
            n = -n
        # Support edge of a along +n and of b along -n.
        mid_a = ca
        mid_b = cb
        for k in range(3):
            if k != ia:
                col = _column(rot_a, k)
                mid_a = mid_a + _sign(wp.dot(col, n)) * half_a[k] * col
            if k != ib:
                col = _column(rot_b, k)
                mid_b = mid_b - _sign(wp.dot(col, n)) * half_b[k] * col
        st = _segment_segment_params(
            mid_a - half_a[ia] * dir_a,
            mid_a + half_a[ia] * dir_a,
            mid_b - half_b[ib] * dir_b,
            mid_b + half_b[ib] * dir_b,
        )
        pa = mid_a + (2.0 * st[0] - 1.0) * half_a[ia] * dir_a
        pb = mid_b + (2.0 * st[1] - 1.0) * half_b[ib] * dir_b
        return _make_contact(pa, pb, n, 1, margin)
    if edge_mode:
        return empty

    # Face mode. n points from a to b; m is the outward normal of the reference face (towards the other box).
    ref_is_a = best_face < 3
    fi = best_face % 3
    rot_r = rot_a
    rot_i = rot_b
    c_r = ca
    c_i = cb
    half_r = half_a
    half_i = half_b
    if not ref_is_a:
        rot_r = rot_b
        rot_i = rot_a
        c_r = cb
        c_i = ca
        half_r = half_b
        half_i = half_a
    n = _column(rot_r, fi)
    if wp.dot(n, d) < 0.0:
        n = -n
    m = n
    if not ref_is_a:
        m = -n
    face_center = c_r + half_r[fi] * m
    t1 = _column(rot_r, (fi + 1) % 3)
    t2 = _column(rot_r, (fi + 2) % 3)
    e1 = half_r[(fi + 1) % 3]
    e2 = half_r[(fi + 2) % 3]

    # Incident face: the face of the other box whose outward normal is most opposed to m.
    ki = 0
    best_dot = -1.0
    for k in range(3):
        dk = wp.abs(wp.dot(_column(rot_i, k), m))
        if dk > best_dot:
            best_dot = dk
            ki = k
    axis_i = _column(rot_i, ki)
    kn = -_sign(wp.dot(axis_i, m)) * axis_i
    inc_center = c_i + half_i[ki] * kn
    u1 = _column(rot_i, (ki + 1) % 3)
    u2 = _column(rot_i, (ki + 2) % 3)
    g1 = half_i[(ki + 1) % 3]
    g2 = half_i[(ki + 2) % 3]

    keep = 1
    p_inc = wp.vec3(0.0)
    p_ref = wp.vec3(0.0)
    if slot < 4:
        # Incident corner inside the reference face (boundary included).
        p_inc = _face_corner(inc_center, u1, g1, u2, g2, slot)
        rel = p_inc - face_center
        if wp.abs(wp.dot(rel, t1)) > e1 + tol or wp.abs(wp.dot(rel, t2)) > e2 + tol:
            keep = 0
        p_ref = p_inc - wp.dot(rel, m) * m
    elif slot < 8:
        # Reference corner, cast along -m onto the incident face plane (|dot(m, kn)| >= 1/sqrt(3)).
        p_ref = _face_corner(face_center, t1, e1, t2, e2, slot - 4)
        tau = wp.dot(p_ref - inc_center, kn) / wp.dot(m, kn)
        p_inc = p_ref - tau * m
        rel = p_inc - inc_center
        w1 = wp.abs(wp.dot(rel, u1))
        w2 = wp.abs(wp.dot(rel, u2))
        if w1 > g1 + 2.0 * tol or w2 > g2 + 2.0 * tol:
            keep = 0
        if w1 >= g1 - tol and w2 >= g2 - tol:
            keep = 0  # coincides with an incident corner, reported by slots 0-3
    else:
        # Incident edge j crossing the line of reference edge r, strictly between the corners of both.
        r = (slot - 8) // 4
        j = (slot - 8) % 4
        q0 = _face_corner(inc_center, u1, g1, u2, g2, j)
        q1 = _face_corner(inc_center, u1, g1, u2, g2, (j + 1) % 4)
        across = t1  # coordinate fixed on the reference edge line
        along = t2  # coordinate running along it
        line = e1
        bound = e2
        if r >= 2:
            across = t2
            along = t1
            line = e2
            bound = e1
        if r % 2 == 1:
            line = -line
        x0 = wp.dot(q0 - face_center, across)
        x1 = wp.dot(q1 - face_center, across)
        y0 = wp.dot(q0 - face_center, along)
        y1 = wp.dot(q1 - face_center, along)
        len_2d = wp.sqrt((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0))
        dx = x1 - x0
        t = 0.0
        if wp.abs(dx) <= _PARALLEL_SIN * len_2d or len_2d <= _LENGTH_EPS:
            keep = 0
        else:
            t = wp.clamp((line - x0) / dx, -1.0, 2.0)
            if t * len_2d <= tol or (1.0 - t) * len_2d <= tol:
                keep = 0  # outside the incident edge or on one of its corners
            if wp.abs(y0 + t * (y1 - y0)) >= bound - tol:
                keep = 0  # outside the reference edge or on one of its corners
        p_inc = q0 + t * (q1 - q0)
        p_ref = p_inc - wp.dot(p_inc - face_center, m) * m
    if ref_is_a:
        return _make_contact(p_ref, p_inc, n, keep, margin)
    return _make_contact(p_inc, p_ref, n, keep, margin)
