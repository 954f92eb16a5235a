# SmolLM2-135M on the 2-core CPU, easy tier, SFT with episode packing (2026-12-02, commit 49c2ba8).
# 86 oracle episodes (2 per train template, 30% with a slip and its recovery), 1.5 epochs = 129 steps
# of one packed episode, lr 1e-4; scored on 40 dev and 40 test episodes (tests ran beside it, so the
# 3,057 s of SFT include contention).
python bench/learn.py --model var/models/smollm2-135m --stages sft --splits dev,test --tier easy --n 2 --limit 40 \
  --sft-n 2 --sft-recovery 0.3 --sft-epochs 1.5 --sft-batch 1 --sft-lr 1e-4 --sft-max-length 3072 --max-steps 6 \
  --batch-size 1 --dtype bfloat16 --next-action 20 --out var/bench/learn-packed
