"""Transmission tendons: spatial geometry against a float64 reference, the spec's numbers, the transmission examples."""
