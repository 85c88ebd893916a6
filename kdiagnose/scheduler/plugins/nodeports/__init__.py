"""nodeports plugin."""
