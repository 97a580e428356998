"""Kernels of the reinforcement-learning layer: observation gathering, per-world parameter scatter, masks.

Observation columns are described by three tables fixed when the observer is built: the source
array each column reads (``OBS_SOURCE_*``), the component inside one element of that source (0 for
scalars, 0..6 for a ``wp.transform``, 0..5 for a ``wp.spatial_vector``), and, per world, the element
index. One thread per (world, column) reads one float, so a whole observation tensor is one launch.
"""

import warp as wp

wp.set_module_options({"enable_backward": False})

# Source arrays an observation column can read. The numbering is private to the RL layer.
OBS_SOURCE_BODY_Q = wp.constant(0)
OBS_SOURCE_BODY_QD = wp.constant(1)
OBS_SOURCE_JOINT_Q = wp.constant(2)
OBS_SOURCE_JOINT_QD = wp.constant(3)
OBS_SOURCE_TENDON_LENGTH = wp.constant(4)
OBS_SOURCE_TENDON_TOTAL_CABLE = wp.constant(5)
OBS_SOURCE_SEGMENT_MATERIAL_TENSION = wp.constant(6)
OBS_SOURCE_SEGMENT_DAMPING_TENSION = wp.constant(7)
OBS_SOURCE_SEGMENT_REST_LENGTH = wp.constant(8)
OBS_SOURCE_GUIDE_WINCH_PAID = wp.constant(9)
OBS_SOURCE_TRANSMISSION_LENGTH = wp.constant(10)
OBS_SOURCE_TRANSMISSION_VELOCITY = wp.constant(11)
OBS_SOURCE_TRANSMISSION_TENSION = wp.constant(12)
OBS_SOURCE_TRANSMISSION_FORCE = wp.constant(13)
OBS_SOURCE_TRANSMISSION_ACTUATION_FORCE = wp.constant(14)
OBS_SOURCE_INPUT = wp.constant(15)


@wp.struct
class ObservationSources:
    """Every array an observation column may read (empty arrays for absent entities)."""

    body_q: wp.array(dtype=wp.transform)
    body_qd: wp.array(dtype=wp.spatial_vector)
    joint_q: wp.array(dtype=float)
    joint_qd: wp.array(dtype=float)
    tendon_length: wp.array(dtype=float)
    tendon_total_cable: wp.array(dtype=float)
    segment_material_tension: wp.array(dtype=float)
    segment_damping_tension: wp.array(dtype=float)
    segment_rest_length: wp.array(dtype=float)
    guide_winch_paid: wp.array(dtype=float)
    transmission_length: wp.array(dtype=float)
    transmission_velocity: wp.array(dtype=float)
    transmission_tension: wp.array(dtype=float)
    transmission_force: wp.array(dtype=float)
    transmission_actuation_force: wp.array(dtype=float)
    inputs: wp.array2d(dtype=float)


@wp.func
def read_source(src: ObservationSources, source: int, world: int, element: int, component: int) -> float:
    """One float of one source array: element ``element``'s component ``component``."""
    if source == OBS_SOURCE_BODY_Q:
        t = src.body_q[element]
        return t[component]
    if source == OBS_SOURCE_BODY_QD:
        v = src.body_qd[element]
        return v[component]
    if source == OBS_SOURCE_JOINT_Q:
        return src.joint_q[element]
    if source == OBS_SOURCE_JOINT_QD:
        return src.joint_qd[element]
    if source == OBS_SOURCE_TENDON_LENGTH:
        return src.tendon_length[element]
    if source == OBS_SOURCE_TENDON_TOTAL_CABLE:
        return src.tendon_total_cable[element]
    if source == OBS_SOURCE_SEGMENT_MATERIAL_TENSION:
        return src.segment_material_tension[element]
    if source == OBS_SOURCE_SEGMENT_DAMPING_TENSION:
        return src.segment_damping_tension[element]
    if source == OBS_SOURCE_SEGMENT_REST_LENGTH:
        return src.segment_rest_length[element]
    if source == OBS_SOURCE_GUIDE_WINCH_PAID:
        return src.guide_winch_paid[element]
    if source == OBS_SOURCE_TRANSMISSION_LENGTH:
        return src.transmission_length[element]
    if source == OBS_SOURCE_TRANSMISSION_VELOCITY:
        return src.transmission_velocity[element]
    if source == OBS_SOURCE_TRANSMISSION_TENSION:
        return src.transmission_tension[element]
    if source == OBS_SOURCE_TRANSMISSION_FORCE:
        return src.transmission_force[element]
    if source == OBS_SOURCE_TRANSMISSION_ACTUATION_FORCE:
        return src.transmission_actuation_force[element]
    # OBS_SOURCE_INPUT: a user-written per-world value (e.g. a goal), column ``component``.
    return src.inputs[world, component]


@wp.kernel
def gather_observations(
    # Model: the column tables
    column_source: wp.array(dtype=wp.int32),
    column_component: wp.array(dtype=wp.int32),
    column_offset: wp.array(dtype=float),
    column_scale: wp.array(dtype=float),
    column_element: wp.array2d(dtype=wp.int32),
    # State: the arrays the columns read
    src: ObservationSources,
    # Output:
    obs: wp.array2d(dtype=float),
):
    """``obs[world, col] = (value - offset[col]) * scale[col]`` for one (world, column) pair."""
    world, col = wp.tid()
    v = read_source(src, column_source[col], world, column_element[world, col], column_component[col])
    obs[world, col] = (v - column_offset[col]) * column_scale[col]


@wp.kernel
def scatter_floats(
    # Input:
    index: wp.array(dtype=wp.int32),
    width: int,
    values: wp.array(dtype=float),
    # Output:
    dst: wp.array(dtype=float),
):
    """``dst[index[i] * width + c] = values[i * width + c]``: write ``width`` floats per selected element."""
    i = wp.tid()
    e = index[i // width]
    dst[e * width + i % width] = values[i]


@wp.kernel
def mask_from_bool(
    # Input:
    src: wp.array(dtype=wp.bool),
    # Output:
    mask: wp.array(dtype=wp.int32),
):
    """An int32 world mask (1 = selected) from a boolean array."""
    w = wp.tid()
    mask[w] = wp.where(src[w], 1, 0)


@wp.kernel
def mask_from_float(
    # Input:
    src: wp.array(dtype=float),
    # Output:
    mask: wp.array(dtype=wp.int32),
):
    """An int32 world mask (1 = selected) from a float array (nonzero selects)."""
    w = wp.tid()
    mask[w] = wp.where(src[w] != 0.0, 1, 0)


@wp.kernel
def mask_from_int(
    # Input:
    src: wp.array(dtype=wp.int32),
    # Output:
    mask: wp.array(dtype=wp.int32),
):
    """An int32 world mask (1 = selected) from an int32 array (nonzero selects)."""
    w = wp.tid()
    mask[w] = wp.where(src[w] != 0, 1, 0)


@wp.kernel
def reset_episodes(
    # Input:
    mask: wp.array(dtype=wp.int32),
    # Output: the episode counters, updated in place
    episode_step: wp.array(dtype=wp.int32),
    episode_count: wp.array(dtype=wp.int32),
    pending: wp.array(dtype=wp.int32),
):
    """Start a new episode in every selected world: step counter to 0, episode counter + 1, and no
    reset pending any more (``done`` keeps the value the last step reported, so an automatic reset
    still returns it). ``mask`` may be ``pending`` itself: each thread reads its entry before writing."""
    w = wp.tid()
    if mask[w] == 0:
        return
    episode_step[w] = 0
    episode_count[w] = episode_count[w] + 1
    pending[w] = 0


@wp.func
def episode_rng(seed: int, world: int, episode: int) -> wp.uint32:
    """Random state of one episode of one world: a hash of (seed, world) offset by the episode number.

    ``world`` is the *global* world index (``VecEnv.world_offset`` + local index), so a shard of
    worlds in one process draws what the same worlds draw in a single process holding them all. Two
    hashes in a row keep (seed, world, episode) triples apart that a plain sum would merge (seed 1,
    world 0 against seed 0, world 1).
    """
    state = wp.rand_init(seed, world)
    return wp.rand_init(wp.randi(state), episode)


@wp.kernel
def finish_env_step(
    # Input: episode lengths, worlds this step restarts (NEXT_STEP), observations, keep finals
    max_steps: wp.array(dtype=wp.int32),
    pending: wp.array(dtype=wp.int32),
    obs: wp.array2d(dtype=float),
    keep_final: int,
    # Output: the episode clock and the step's flags, updated in place
    episode_step: wp.array(dtype=wp.int32),
    reward: wp.array(dtype=float),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    done: wp.array(dtype=wp.bool),
    done_mask: wp.array(dtype=wp.int32),
    final_obs: wp.array2d(dtype=float),
):
    """Close one env step in every world after ``evaluate`` wrote ``reward`` and ``terminated``.

    A world whose reset is pending (its episode ended on the previous step, NEXT_STEP autoreset)
    reports reward 0 and no flags: this step only restarts it. Otherwise its step counter advances;
    ``truncated`` = the episode reached its length without terminating; ``done`` = either; and with
    ``keep_final`` the observation of a finished episode is copied to ``final_obs``.
    """
    w = wp.tid()
    if pending[w] != 0:
        reward[w] = 0.0
        terminated[w] = False
        truncated[w] = False
        done[w] = False
        done_mask[w] = 0
        return
    step = episode_step[w] + 1
    episode_step[w] = step
    term = terminated[w]
    trunc = step >= max_steps[w] and not term
    finished = term or trunc
    truncated[w] = trunc
    done[w] = finished
    done_mask[w] = wp.where(finished, 1, 0)
    if finished and keep_final != 0:
        for j in range(obs.shape[1]):
            final_obs[w, j] = obs[w, j]
