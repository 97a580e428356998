"""Import and persistence: native JSON (newton_tendon.io), MJCF, UsdPhysics, USD tendons."""
