"""A viewer that draws nothing and runs a fixed number of frames, for headless runs and tests.

It takes the calls of newton's viewer interface (``set_model``, ``begin_frame``, ``log_state``,
``log_lines``, ``end_frame``, ``is_running``, ...), so a script written for newton's
``ViewerNull`` (its examples' ``--viewer null --test`` runs) drives a simulation here unchanged. It
keeps what it is given so a test can inspect it: the model, the last state, and per name the last
array logged (lines, points, arrays, scalars).
"""

from __future__ import annotations

import time as _time

import numpy as np
import warp as wp


class ViewerNull:
    """Runs ``num_frames`` frames (each ``end_frame`` counts one) and renders nothing.

    ``benchmark`` (or a ``benchmark_timeout`` [s]) times the frames after ``benchmark_start_frame``
    warm-up frames; :meth:`benchmark_result` reports frames per second. The viewer has no user input:
    :meth:`apply_forces` applies none and :meth:`should_step` is always true."""

    def __init__(
        self,
        num_frames: int = 1000,
        benchmark: bool = False,
        benchmark_timeout: float | None = None,
        benchmark_start_frame: int = 3,
    ):
        if isinstance(num_frames, bool) or not isinstance(num_frames, (int, np.integer)) or num_frames < 0:
            raise ValueError(f"ViewerNull: num_frames must be an int >= 0, got {num_frames!r}")
        self.num_frames = int(num_frames)
        self.frame_count = 0
        self.time = 0.0
        self.benchmark = bool(benchmark) or benchmark_timeout is not None
        self.benchmark_timeout = benchmark_timeout
        self.benchmark_start_frame = int(benchmark_start_frame)
        self._bench_start: float | None = None
        self._bench_frames = 0
        self._bench_elapsed = 0.0
        self.model = None
        self.state = None
        self.camera = None
        self.logged: dict[str, object] = {}
        """The last value logged under each name (lines: (starts, ends, colors); others: the value)."""

    # Frames ------------------------------------------------------------------------------------

    def begin_frame(self, time: float) -> None:
        self.time = float(time)

    def end_frame(self) -> None:
        self.frame_count += 1
        if not self.benchmark:
            return
        if self.frame_count == self.benchmark_start_frame:
            wp.synchronize()
            self._bench_start = _time.perf_counter()
        elif self._bench_start is not None:
            wp.synchronize()
            self._bench_frames = self.frame_count - self.benchmark_start_frame
            self._bench_elapsed = _time.perf_counter() - self._bench_start

    def is_running(self) -> bool:
        if self.frame_count >= self.num_frames:
            return False
        timeout = self.benchmark_timeout
        return not (timeout is not None and self._bench_start is not None and self._bench_elapsed >= timeout)

    def should_step(self) -> bool:
        return True

    def is_paused(self) -> bool:
        return False

    def benchmark_result(self) -> dict[str, float | int] | None:
        """``{"fps", "frames", "elapsed"}`` of the timed frames, or None without benchmarking."""
        if not self.benchmark:
            return None
        if self._bench_frames == 0 or self._bench_elapsed == 0.0:
            return {"fps": 0.0, "frames": 0, "elapsed": 0.0}
        return {
            "fps": self._bench_frames / self._bench_elapsed,
            "frames": self._bench_frames,
            "elapsed": self._bench_elapsed,
        }

    def close(self) -> None:
        pass

    # Scene -------------------------------------------------------------------------------------

    def set_model(self, model, max_worlds: int | None = None) -> None:
        self.model = model

    def set_camera(self, pos, pitch: float | None = None, yaw: float | None = None) -> None:
        self.camera = (tuple(float(c) for c in pos), pitch, yaw)

    def set_world_offsets(self, spacing) -> None:
        pass

    def apply_forces(self, state) -> None:
        """No user input, so no picking forces."""

    # Logging: kept by name, drawn nowhere ----------------------------------------------------

    def log_state(self, state) -> None:
        self.state = state

    def log_lines(self, name: str, starts, ends, colors=None, width: float = 0.01, hidden: bool = False) -> None:
        self.logged[name] = (starts, ends, colors)

    def log_points(self, name: str, points, radii=None, colors=None, hidden: bool = False) -> None:
        self.logged[name] = points

    def log_array(self, name: str, array) -> None:
        self.logged[name] = array

    def log_scalar(self, name: str, value, *, clear: bool = False, smoothing: int = 1) -> None:
        self.logged[name] = value

    def log_contacts(self, contacts, state) -> None:
        self.logged["contacts"] = contacts

    def log_mesh(self, name: str, points, indices, *args, **kwargs) -> None:
        self.logged[name] = points

    def log_instances(self, name: str, mesh: str, xforms, *args, **kwargs) -> None:
        self.logged[name] = xforms

    def log_shapes(self, name: str, geo_type, geo_scale, xforms, *args, **kwargs) -> None:
        self.logged[name] = xforms
