"""nodevolumelimits plugin."""
