#!/usr/bin/env bash
# The trainer's evidence in one go, sized for one GPU (minutes) or, with SCALE=smoke, for a check
# of the whole path on the tiny model (a minute or two anywhere):
#   1. SFT throughput: ours against a plain TRL script (bench/train.py, medians of 3 alternating runs);
#   2. base → SFT (every template, the one compact context, recovery rows after slips, 2 epochs) →
#      corrections (DAgger: the SFT model's own failures on new train values, continued by the
#      oracle from the first wrong step, with a replay of the SFT data) → GRPO+CARE on the templates the SFT model solves sometimes (0 < success < 1; groups without
#      reward variance dropped and counted) on dev and test with 95% intervals and teacher-forced
#      next-action accuracy, constrained-decoding validity of the base model, and the ablation GRPO
#      without CARE from the same SFT checkpoint (bench/learn.py);
#   3. a harness round on the SFT model's failures: proposals through the paired dev/test gate
#      (bench/coevolve.py --generations 1).
# Usage: bench/evidence.sh OUT_DIR [smollm2|tiny|MODEL_DIR]   (smollm2: converted once into var/models)
# Every stage writes its JSON as it finishes, so a run stopped by a time limit keeps what it did.
set -uo pipefail
out=${1:?usage: bench/evidence.sh OUT_DIR [smollm2|tiny|MODEL_DIR]}
model=${2:-smollm2}
scale=${SCALE:-full}
cd "$(dirname "$0")/.."
mkdir -p "$out"
case "$model" in
  smollm2) model=$(python3 -c "from trainer.models import import_smollm2, smollm2_dir; print(import_smollm2(smollm2_dir('var'), 'var'))" | tail -1) || exit 1 ;;
  tiny) model=$(python3 -c "from trainer.models import build_tiny; print(build_tiny('var/models/tiny'))" | tail -1) || exit 1 ;;
esac
echo "model: $model, scale: $scale"
if [ "$scale" = smoke ]; then
  train=(--sft-steps 2 --reps 1 --rl-steps 0 --batch 2 --max-length 4096)
  learn=(--limit 6 --constrained-limit 3 --max-steps 2 --max-new-tokens 24 --batch-size 6 --sft-n 1
         --sft-max-steps 2 --sft-max-length 4096 --sft-recovery 0.3 --next-action 2 --rl-steps 1 --rl-group 2
         --rl-max-completion 64 --rl-tool-calls 2 --corrections-n 1)
  coevolve=(--generations 1 --sft-n 1 --sft-steps 2 --sft-batch 2 --sft-lr 3e-3 --eval-templates 2 --templates 2
            --n 1 --max-steps 2 --max-new-tokens 24 --proposals 1 --batch-size 8)
else
  train=(--sft-steps 20 --reps 3 --rl-steps 0 --batch 16 --max-length 3072)
  learn=(--batch-size 256 --max-steps 8 --max-new-tokens 144 --sft-n 3 --sft-batch 16 --sft-max-length 3072
         --sft-epochs 2 --sft-lr 2e-4 --sft-recovery 0.3 --next-action 60
         --rl-steps "${RL_STEPS:-50}" --rl-group 8 --rl-tasks-per-step 4 --rl-max-completion 1024
         --rl-tool-calls 6 --rl-lr 1e-6 --rl-max-seconds "${RL_SECONDS:-100}" --corrections-n 1)
  coevolve=(--generations 1 --sft-n 3 --sft-batch 16 --sft-lr 2e-4 --templates 12 --n 2 --proposals 3
            --batch-size 256)
fi
timeout "${TRAIN_BENCH_S:-150}" python3 bench/train.py --model "$model" --out "$out/train" "${train[@]}"
echo "train bench exit $?"
timeout "${LEARN_BENCH_S:-600}" python3 bench/learn.py --model "$model" --out "$out/learn" \
  --stages zero,sft,corrections,rl,ablation --constrained "${learn[@]}"
echo "learn bench exit $?"
timeout "${COEVOLVE_BENCH_S:-240}" python3 bench/coevolve.py --model "$model" --out "$out/coevolve" "${coevolve[@]}"
echo "coevolve bench exit $?"
