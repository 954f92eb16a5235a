# SmolLM2-135M on the 2-core CPU, easy tier (2026-12-03, commit 36a36d7): SFT on 470 packed oracle episodes
# (12 per train template, 30% with a slip and recovery; 1 epoch, lr 2e-4; the smollm2-cpu-easy-n12 recipe,
# retrained: dev success 0.400 again), then GRPO+CARE and, from the same SFT checkpoint with the same tasks
# and seeds, plain GRPO (the ablation): G=4, 2 tasks per step, lr 2e-6, <= 192 tokens, 600 s for GRPO+CARE
# (5 steps) and as many steps for plain GRPO. All three scored on the same 40 dev episodes (every easy
# template). The SFT stage ran first (4,139 s, CI beside it), then this command resumed from its checkpoint:
.venv/bin/python bench/learn.py --stages sft,rl,ablation --splits dev,test --tier easy --n 2 --limit 40 \
  --sft-n 12 --sft-recovery 0.3 --sft-epochs 1 --sft-batch 1 --sft-lr 2e-4 --sft-max-length 3072 --max-steps 6 \
  --batch-size 1 --dtype bfloat16 --next-action 20 --out var/bench/learn-rl   # stopped once SFT ended
.venv/bin/python bench/learn.py --sft-checkpoint var/bench/learn-rl/sft --stages sft,rl,ablation --splits dev \
  --tier easy --n 2 --limit 40 --max-steps 6 --batch-size 1 --dtype bfloat16 --next-action 20 --rl-steps 10 \
  --rl-max-seconds 600 --rl-group 4 --rl-tasks-per-step 2 --rl-lr 2e-6 --rl-max-completion 192 --out var/bench/learn-rl
