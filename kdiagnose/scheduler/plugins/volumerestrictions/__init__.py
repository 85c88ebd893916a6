"""volumerestrictions plugin."""
