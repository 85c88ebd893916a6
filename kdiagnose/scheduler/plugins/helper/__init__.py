"""helper plugin."""
