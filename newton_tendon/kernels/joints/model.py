"""Joint constants as kernels take them (``JointModel``) and the two poses every joint row starts from."""

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.struct
class JointModel:
    """Per-joint constants (joint frames, axes and gains) grouped for kernel signatures."""

    type: wp.array(dtype=wp.int32)
    parent: wp.array(dtype=wp.int32)
    child: wp.array(dtype=wp.int32)
    X_p: wp.array(dtype=wp.transform)
    X_c: wp.array(dtype=wp.transform)
    q_start: wp.array(dtype=wp.int32)
    qd_start: wp.array(dtype=wp.int32)
    dof_dim: wp.array(dtype=wp.vec2i)
    axis: wp.array(dtype=wp.vec3)
    limit_lower: wp.array(dtype=float)
    limit_upper: wp.array(dtype=float)
    target_ke: wp.array(dtype=float)
    target_kd: wp.array(dtype=float)
    armature: wp.array(dtype=float)
    enabled: wp.array(dtype=wp.int32)


@wp.func
def parent_pose(body_q: wp.array(dtype=wp.transform), parent: int):
    if parent < 0:
        return wp.transform_identity()
    return body_q[parent]


@wp.func
def body_spatial_velocity(body_qd: wp.array(dtype=wp.spatial_vector), b: int):
    if b < 0:
        return wp.spatial_vector()
    return body_qd[b]
