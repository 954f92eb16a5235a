.venv/bin/python bench/learn.py --stages sft,corrections --splits dev,test --tier easy --n 2 --limit 40 \
  --sft-n 12 --sft-recovery 0.3 --sft-epochs 1 --sft-batch 1 --sft-lr 2e-4 --sft-max-length 3072 --max-steps 6 \
  --batch-size 1 --dtype bfloat16 --next-action 20 --corrections-n 2 --corrections-replay 1.0 --out var/bench/learn-n12
