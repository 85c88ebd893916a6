"""imagelocality plugin."""
