"""Actions and world masks: copying a batch from the caller (torch, NumPy, Warp) into the fixed device
buffers that a captured step or reset reads.

:func:`copy_world_mask` fills the int32 world mask that ``solver.reset`` takes; ``_copy_actions``
fills an environment's ``[world_count, action_dim]`` action buffer. A Warp or torch source on the
buffer's device is copied by the device, without a host round trip.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.kernels import observe as K

from ._torch import _import_torch, _is_torch_tensor


def copy_world_mask(src, out: wp.array) -> wp.array:
    """Copy a per-world selection into the int32 mask ``out`` [world_count] (1 = selected) that
    ``solver.reset`` takes; returns ``out``.

    ``src`` may be None (every world), a torch tensor or wp.array of bool, int32 or float32 (nonzero
    selects; on ``out``'s device it is read by a kernel without a host round trip, so this is
    graph-capturable when ``src`` is a fixed buffer), or NumPy / a list (copied from the host).
    """
    where = "copy_world_mask"
    if not isinstance(out, wp.array) or out.dtype != wp.int32 or out.ndim != 1:
        raise TypeError(f"{where}: out must be a 1-D wp.array of int32")
    n = out.shape[0]
    if src is None:
        out.fill_(1)
        return out
    if _is_torch_tensor(src):
        torch = _import_torch(where)
        if tuple(src.shape) != (n,):
            raise ValueError(f"{where}: mask must have shape ({n},), got {tuple(src.shape)}")
        if src.device != torch.device(wp.device_to_torch(out.device)):
            src = src.to(wp.device_to_torch(out.device))
        if src.dtype not in (torch.bool, torch.int32, torch.float32):
            src = src.to(torch.int32)
        src = wp.from_torch(src.contiguous())
    if isinstance(src, wp.array):
        if src.shape != (n,):
            raise ValueError(f"{where}: mask must have shape ({n},), got {src.shape}")
        if src.device != out.device:
            src = src.to(out.device)
        kernels = {wp.bool: K.mask_from_bool, wp.int32: K.mask_from_int, wp.float32: K.mask_from_float}
        kernel = kernels.get(src.dtype)
        if kernel is None:
            raise TypeError(f"{where}: mask dtype must be bool, int32 or float32, got {src.dtype}")
        wp.launch(kernel, dim=n, inputs=[src], outputs=[out], device=out.device)
        return out
    m = np.asarray(src)
    if m.shape != (n,):
        raise ValueError(f"{where}: mask must have shape ({n},), got {m.shape}")
    out.assign((m != 0).astype(np.int32))
    return out


def _copy_actions(where: str, actions, out: wp.array, own_view=None):
    """Copy ``actions`` (torch tensor, wp.array or array-like) of ``out``'s shape into ``out``
    (float32 on its device). ``own_view`` is the torch view of ``out`` itself, if any: a tensor that
    is that view was written in place, and nothing is copied."""
    shape = tuple(out.shape)
    if _is_torch_tensor(actions):
        if tuple(actions.shape) != shape:
            raise ValueError(f"{where}: actions must have shape {shape}, got {tuple(actions.shape)}")
        # The env's own action view was written in place: nothing to copy.
        if own_view is None or actions.data_ptr() != own_view.data_ptr():
            torch = _import_torch(where)
            a = actions.detach().to(device=wp.device_to_torch(out.device), dtype=torch.float32).contiguous()
            wp.copy(out, wp.from_torch(a))
    elif isinstance(actions, wp.array):
        if actions.shape != shape:
            raise ValueError(f"{where}: actions must have shape {shape}, got {actions.shape}")
        wp.copy(out, actions)
    else:
        a = np.asarray(actions, dtype=np.float32)
        if a.shape != shape:
            raise ValueError(f"{where}: actions must have shape {shape}, got {a.shape}")
        out.assign(a)
