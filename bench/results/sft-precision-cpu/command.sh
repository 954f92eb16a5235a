# SFT tokens/s of SmolLM2-135M on this project's 2-core AMD EPYC (avx512_bf16), 2026-12-02:
# fp32 vs bf16 mixed precision, the LM head on every position (TRL's CPU default) vs on the answer
# positions only (trainer.answer_positions); 6 steps of packed easy-tier oracle episodes, batch 1,
# lr 2e-4, medians of 3 runs in rotating order (table.txt). One fp32/every run (72 tok/s) shared the
# CPU with a short smoke test; the other two ran at 78.
.venv/bin/python bench/train.py --sft-steps 0 --rl-steps 0 --precision-steps 6 --reps 3 --out var/bench/precision
