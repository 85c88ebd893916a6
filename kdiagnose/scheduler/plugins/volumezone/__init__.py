"""volumezone plugin."""
