"""nodedeclaredfeatures plugin."""
