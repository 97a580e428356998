"""Rigid bodies on both solvers (integrator, joints, drives, limits, contacts) and the narrow-phase contact slots."""
