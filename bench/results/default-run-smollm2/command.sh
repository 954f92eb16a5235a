# The default `flywheel run` (no flags) on a fresh clone and data dir, 2 idle CPU cores, 2026-12-03 (commit 45027bb's
# code): 702 easy-tier rows, SmolLM2-135M scored as it comes (generation 0), SFT 1 epoch (250 packed episodes),
# scored again on the same 40 dev + 40 test episodes. 3,329 s wall. run-summary.txt is the end of its output.
.venv/bin/flywheel run
