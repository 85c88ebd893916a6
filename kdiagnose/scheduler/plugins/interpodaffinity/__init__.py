"""interpodaffinity plugin."""
