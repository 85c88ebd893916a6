"""One module per command: diagnose (offline dumps), live (pod, pods), check (the CI gate); common options."""
