"""nodeaffinity plugin."""
