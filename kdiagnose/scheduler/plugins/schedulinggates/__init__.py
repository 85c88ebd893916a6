"""schedulinggates plugin."""
