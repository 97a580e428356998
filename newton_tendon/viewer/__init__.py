"""Viewers: a USD recorder, headless PNG pictures and history plots, an optional live web viewer, and
``ViewerNull`` (newton's headless viewer interface: runs frames, draws nothing).

Importing this package is cheap: ``pxr`` is imported when a recorder is created, ``matplotlib``
only by :func:`plot_history`, and ``viser`` only by :class:`ViewerViser` (the ``viewer`` extra).
"""

from ._geometry import CABLE_WIDTH_ATTRIBUTE, DEFAULT_CABLE_WIDTH, SceneGeometry, TendonLayout, tension_color
from .null import ViewerNull
from .recorder import RecorderUSD
from .render import Camera, plot_history, render_image, render_png, resolve_camera, write_png


def __getattr__(name):
    # The live viewer imports viser when first used, not when this package is imported.
    if name == "ViewerViser":
        from .live import ViewerViser

        return ViewerViser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CABLE_WIDTH_ATTRIBUTE",
    "DEFAULT_CABLE_WIDTH",
    "Camera",
    "RecorderUSD",
    "SceneGeometry",
    "TendonLayout",
    "ViewerNull",
    "ViewerViser",
    "plot_history",
    "render_image",
    "render_png",
    "resolve_camera",
    "tension_color",
    "write_png",
]
