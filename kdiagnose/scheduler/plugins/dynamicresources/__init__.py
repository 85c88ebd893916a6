"""dynamicresources plugin."""
