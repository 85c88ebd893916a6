"""volumebinding plugin."""
