"""The trainer service: snapshot events in, checkpoints, RL group results and training feedback out."""
