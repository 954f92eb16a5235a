"""Services: one package per service, the CLI, and the gate's web app."""
