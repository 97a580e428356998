"""ModelBuilder and finalize: validation, mass properties, worlds, contact pairs, routed tendons, bad input."""
