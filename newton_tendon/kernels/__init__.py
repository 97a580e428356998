"""Device side of newton_tendon: Warp functions and kernels only.

Modules here never import from ``newton_tendon``; the host package imports them and launches
their kernels through one launcher function per stage.
"""
