"""nodeunschedulable plugin."""
