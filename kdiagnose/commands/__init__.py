"""Subcommands that other modules plug into the CLI (live pod/pods, check)."""
