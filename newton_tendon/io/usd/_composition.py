"""Opening a USD stage for import, and checking that it composed.

A reference, payload or sublayer that is missing, a reference cycle, or an inherit of a prim
defined nowhere leaves the stage without what those arcs bring in; :func:`check_composition` raises
or warns (``UsdCompositionWarning``) before anything is imported.
"""

from __future__ import annotations

import os
import warnings

MAX_ECHO = 300
"""Longest USD composition-error text (characters) a message repeats."""


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ECHO else text[: MAX_ECHO - 3] + "..."


def _composition_problems(stage) -> list[str]:
    """What failed to compose on ``stage``, one line each naming the prim and the layer.

    Pcp reports a missing referenced file, prim, sublayer or payload and a reference cycle
    (``Usd.Stage.GetCompositionErrors``); everything those arcs would have brought in is absent from
    the stage. An inherit of a class prim that exists nowhere is legal USD (Pcp reports nothing), but
    a prim that inherits from nothing silently lacks what the class was to give it, so it counts too.
    """
    from pxr import Usd

    root = stage.GetRootLayer().identifier
    problems = []
    for e in stage.GetCompositionErrors():
        site = getattr(e, "rootSite", None)
        prim = str(site.path) if site is not None else "?"
        problems.append(f"prim <{prim}> (stage {root}): {type(e).__name__}: {_clip(str(e))}")
    # Active prims, class (abstract) and "over" prims included: a class inheriting a missing class
    # passes the loss on to every prim that inherits it.
    for prim in Usd.PrimRange.Stage(stage, Usd.TraverseInstanceProxies(Usd.PrimIsActive)):
        if not prim.HasAuthoredInherits():
            continue
        for target in prim.GetInherits().GetAllDirectInherits():
            if not stage.GetPrimAtPath(target):
                layers = [spec.layer.identifier for spec in prim.GetPrimStack() if spec.HasInfo("inheritPaths")]
                problems.append(
                    f"prim <{prim.GetPath()}> (layer {layers[0] if layers else root}): inherits <{target}>, "
                    "which is defined nowhere on the stage"
                )
    return problems


def check_composition(stage, *, strict: bool = True, owner: str = "add_usd") -> None:
    """Raise ``ValueError`` (``strict``) or warn (``warnings.warn``) when ``stage`` did not compose:
    a missing referenced file or prim, sublayer or payload, a reference cycle, a missing inherit."""
    problems = _composition_problems(stage)
    if not problems:
        return
    shown = problems[:5]
    more = f"; and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
    msg = (
        f"{owner}: the stage did not compose, so what these arcs bring in would be missing from the import: "
        + "; ".join(shown)
        + more
    )
    if strict:
        raise ValueError(msg + " (pass strict=False to import what did compose)")
    warnings.warn(msg, UsdCompositionWarning, stacklevel=3)


class UsdCompositionWarning(UserWarning):
    """``add_usd(..., strict=False)`` imported a stage with composition errors (what failed is absent)."""


def _open_stage(source):
    from pxr import Tf, Usd

    if isinstance(source, Usd.Stage):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"add_usd: source must be a file path or a pxr Usd.Stage, got {type(source).__name__}")
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"add_usd: USD file {path!r} does not exist")
    try:
        stage = Usd.Stage.Open(path)
    except Tf.ErrorException as e:
        raise ValueError(f"add_usd: cannot open USD file {path!r}: {str(e).strip()}") from None
    if stage is None:
        raise ValueError(f"add_usd: cannot open USD file {path!r}")
    return stage
