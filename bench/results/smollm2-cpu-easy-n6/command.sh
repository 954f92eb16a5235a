# SmolLM2-135M on the 2-core CPU, easy tier (2026-12-02, commit dceac7d): SFT on 235 packed oracle episodes
# (6 per train template, 30% with a slip and recovery; twice the data of smollm2-cpu-easy-n3), 1 epoch, lr 2e-4,
# scored on the same 40 dev + 40 test episodes (every easy template). The base model on these tasks: 0.000 / 0.000
# (smollm2-cpu-easy-n3/zero-*.json, same tasks). The CPU was shared with other work for part of the run (66 tok/s).
.venv/bin/python bench/learn.py --stages sft --splits dev,test --tier easy --n 2 --limit 40 \
  --sft-n 6 --sft-recovery 0.3 --sft-epochs 1 --sft-batch 1 --sft-lr 2e-4 --sft-max-length 3072 --max-steps 6 \
  --batch-size 1 --dtype bfloat16 --next-action 20 --out var/bench/learn-n6
# compare.png: base / SFT on 117 episodes (smollm2-cpu-easy-n3) / SFT on 235 episodes (this run), success with 95% intervals
