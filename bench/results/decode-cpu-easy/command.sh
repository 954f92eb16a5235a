# SmolLM2-135M after one SFT epoch on an easy-tier oracle snapshot (156 packed episodes, 30% recovery):
#   flywheel train snapshot --out SNAP --tier easy --n 4 --recovery 0.3
#   flywheel train sft --model var/models/smollm2-135m --snapshot SNAP --out SFT --lr 2e-4 --batch-size 1 --epochs 1
python bench/prefix_cache.py --model SFT --tasks 8 --tier easy --reps 3 --max-steps 6 --max-new-tokens 96 \
  --batch-size 0 --json bench/results/decode-cpu-easy/report.json
