"""podtopologyspread plugin."""
