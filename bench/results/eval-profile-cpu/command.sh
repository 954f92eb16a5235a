# The evaluation's forward passes against lone passes of the same shapes (2026-12-07, 2 quiet AVX2
# cores, fp32), SmolLM2-135M after one SFT epoch of the default run (2026-12-06), 6 easy dev tasks of
# <= 6 steps, medians of 3. One at a time (the CPU default: prompt cache + lookup drafts): 33.2 s, 186
# passes, predicted 34.5 s -> prediction / measured 1.04 (aim >= 0.77), 1.1% of the time outside passes.
# Batches of 6 (left-padded, the GPU path): 42.6 s, 70 passes, predicted 32.7 s -> 0.77 (passes run 1.28x
# their lone cost: the padding mask), 1.1% outside passes.
.venv/bin/python bench/eval_profile.py --model CHECKPOINT --tasks 6 --reps 3 --json bench/results/eval-profile-cpu/one-at-a-time.json
.venv/bin/python bench/eval_profile.py --model CHECKPOINT --tasks 6 --reps 3 --batch-size 6 --json bench/results/eval-profile-cpu/batched-6.json
