# SmolLM2-135M on the 2-core CPU, easy tier (2026-12-02, commit bc83617): base and SFT on 40 dev + 40 test episodes
# covering every easy template; SFT on 117 packed oracle episodes (3 per train template, 30% with a slip and recovery), 1 epoch, lr 2e-4.
  --sft-n 3 --sft-recovery 0.3 --sft-epochs 1 --sft-batch 1 --sft-lr 2e-4 --sft-max-length 3072 --max-steps 6 \
  --batch-size 1 --dtype bfloat16 --next-action 20 --out var/bench/learn-n3
