"""Torch interop of the RL helpers: zero-copy views between Warp arrays and torch tensors, host copies
of array-like inputs, and the choice of an environment's array backend.

torch is optional: it is imported only inside the functions that need it (``_import_torch`` raises an
``ImportError`` that says how to install it).
"""

from __future__ import annotations

import numpy as np
import warp as wp


def _import_torch(where: str):
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{where} needs PyTorch, which is an optional dependency of newton_tendon; install it with "
            "`pip install torch` (or the package's `torch` extra)"
        ) from e
    return torch


def to_torch(array: wp.array, *, requires_grad: bool = False):
    """A torch tensor sharing ``array``'s memory (no copy), on the matching torch device.

    Writes through either object are seen by the other. Vector and matrix dtypes become trailing
    dimensions (a ``wp.transform`` array of shape [n] becomes a float32 tensor [n, 7]).
    """
    _import_torch("to_torch")
    if not isinstance(array, wp.array):
        raise TypeError(f"to_torch: expected a wp.array, got {type(array).__name__}")
    return wp.to_torch(array, requires_grad=requires_grad)


def from_torch(tensor, dtype=None) -> wp.array:
    """A Warp array sharing ``tensor``'s memory (no copy). ``dtype`` (e.g. ``wp.vec3``) folds trailing
    dimensions into a vector dtype; by default the tensor's scalar type is kept. The tensor must stay
    alive as long as the array is used."""
    torch = _import_torch("from_torch")
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"from_torch: expected a torch.Tensor, got {type(tensor).__name__}")
    return wp.from_torch(tensor, dtype=dtype)


def _is_torch_tensor(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def _to_numpy(where: str, values) -> np.ndarray:
    """Host copy of array-like ``values`` (NumPy, lists, scalars, wp.array, torch tensor), float64."""
    if isinstance(values, wp.array):
        values = values.numpy()
    elif _is_torch_tensor(values):
        values = values.detach().cpu().numpy()
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: values must be numeric array-like, got {type(values).__name__}") from e
    return out


def _select_backend(where: str, backend: str) -> str:
    """The array backend of an environment: "torch" or "numpy" as given, or for "auto" torch if it
    can be imported, else numpy. ``backend="torch"`` without torch raises ``ImportError``."""
    if backend == "auto":
        try:
            import torch  # noqa: F401

            backend = "torch"
        except ImportError:
            backend = "numpy"
    elif backend == "torch":
        _import_torch(f"{where}(backend='torch')")
    return backend
