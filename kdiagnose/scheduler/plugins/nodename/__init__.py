"""nodename plugin."""
