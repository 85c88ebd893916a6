"""noderesources plugin."""
