# The services' folds as a run grows (2026-12-07, 2 quiet cores, medians of 3). before.json: the
# session's starting commit c75138c (maps copied on every event); after.json: the persistent maps
# (services/dataflow/pmap.py). CPU ms per episode, first block (~250 episodes folded) -> last (~2,750):
#   curator   before 0.90 -> 2.61 (first/last 0.34)   after 0.67 -> 0.79 (0.82)
#   verifier  before 0.015 -> 0.112 (0.13)            after 0.011 -> 0.011 (0.98)
#   generator before 0.020 -> 0.097 (0.20)            after 0.014 -> 0.014 (1.01)
.venv/bin/python bench/fold.py --episodes 3000 --blocks 6 --reps 3 --json bench/results/fold/after.json
