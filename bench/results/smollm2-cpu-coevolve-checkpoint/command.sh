# One harness round on the default run's trained checkpoint (SmolLM2-135M, SFT on the easy tier,
# fp32 on a 2-core AVX2 CPU; dev 0.153, test 0.114 in that run). 2,465 s.
python bench/coevolve.py --checkpoint <data dir>/checkpoints/<run>/gen1 --generations 1 --tier easy \
    --batch-size 1 --max-steps 6 --eval-n 2 --templates 4 --n 3 --out var/bench/coevolve-ck
