# The services' folds as a run grows (2026-12-07, 2 cores shared with a SmolLM2 training run, so
# single blocks are noisy; the medians and the shape are what to read). before.json: commit 4f9019c
# (maps copied on every event); after.json: the persistent maps (services/dataflow/pmap.py).
# Curator ms per episode at ~250 vs ~2,750 episodes folded: before 0.73 -> 2.47, after 0.94 -> 1.04.
.venv/bin/python bench/fold.py --episodes 3000 --blocks 6 --reps 3 --json bench/results/fold/after.json
