# The default `flywheel run` (no flags) on a fresh data dir, 2 idle CPU cores, 2026-12-06: 702 easy-tier rows
# (30% of oracle episodes slip once and recover), SmolLM2-135M scored as it comes (generation 0), SFT 1 epoch
# (251 packed episodes), scored again on the same 40 dev + 40 test episodes, one greedy answer at a time with
# the prompt cache and lookup drafts. 1,960 s wall. run-summary.txt is the end of its output.
# The run before lookup decoding (2026-12-03, no recovery rows): 3,329 s, dev 0.141 [0.044, 0.262], test 0.103 [0.033, 0.173].
FLYWHEEL_DATA_DIR=/tmp/run1 .venv/bin/flywheel run
