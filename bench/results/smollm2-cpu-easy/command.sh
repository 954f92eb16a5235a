# SmolLM2-135M on the 2-core CPU, easy tier (2026-12-01; commit a128776 for SFT and its dev evaluation).
# Zero-shot base, 40 tasks per split:
python bench/learn.py --model var/models/smollm2-135m --stages zero --splits dev,test --tier easy --n 2 --limit 40 \
  --max-steps 6 --batch-size 1 --dtype bfloat16 --next-action 12 --out var/bench/learn-easy
# SFT (48 steps of 2 rows, lr 2e-4, recovery rows 0.3), scored on dev (the test split was stopped for time):
python bench/learn.py --model var/models/smollm2-135m --stages sft --splits dev,test --tier easy --n 2 --sft-n 3 \
  --sft-recovery 0.3 --sft-max-steps 48 --sft-batch 2 --sft-lr 2e-4 --sft-max-length 3072 --max-steps 6 \
  --batch-size 1 --dtype bfloat16 --next-action 20 --out var/bench/learn-easy
