"""The `flywheel` command line."""
