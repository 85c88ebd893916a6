"""tainttoleration plugin."""
