"""The evaluator service: checkpoints and harness versions in, `eval.reported` with intervals out."""
