"""Routed cables and their winches on SolverXPBD and SolverVBD."""
