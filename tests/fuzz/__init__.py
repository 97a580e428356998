"""Robustness: property-based (hypothesis) fuzzing, the feature combination matrix, degenerate geometry."""
