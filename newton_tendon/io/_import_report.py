"""What the MJCF and URDF importers share once a file has been read into a scratch builder: where
each joint's coordinates landed in the caller's builder, and the one warning per left-out feature."""

from __future__ import annotations

import warnings

import numpy as np


def coordinate_starts(builder) -> tuple[np.ndarray, np.ndarray]:
    """(first ``joint_q`` index, first ``joint_qd`` index) of every joint of ``builder``."""
    n = builder.joint_count
    q = np.cumsum([0] + [builder._joint_coord_count(j) for j in range(n)]).astype(int)
    d = np.cumsum([0] + [builder._joint_dof_count(j) for j in range(n)]).astype(int)
    return q, d


def warn_left_out(owner: str, seen: dict[str, list[str]], reasons: dict[str, str], category) -> dict:
    """One ``category`` warning per feature in ``seen`` (feature -> the elements that use it), naming
    the first three elements and why (``reasons``); returns the report (a copy of ``seen``). The
    warning points at the caller of the builder method that imported the file."""
    report = {k: list(v) for k, v in seen.items()}
    for feature, where in report.items():
        shown = "; ".join(where[:3]) + (f"; and {len(where) - 3} more" if len(where) > 3 else "")
        warnings.warn(
            f"{owner}: {feature}: {reasons[feature]} ({len(where)} element(s): {shown}); "
            "strict=True makes this an error",
            category,
            stacklevel=4,
        )
    return report
