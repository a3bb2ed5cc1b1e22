"""Test support for the cdc packages (not part of any published distribution's runtime)."""
