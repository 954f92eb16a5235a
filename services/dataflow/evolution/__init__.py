"""Harness evolution's domain, shared by the evolver service and the gate's harness page: the fold
and decisions over the harness topic (`decide`), harness spec deltas (`delta`), proposals from
failure traces (`propose`), the paired gate statistics (`paired`) and the evolver's settings."""
