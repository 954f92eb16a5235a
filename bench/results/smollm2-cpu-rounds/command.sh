export FLYWHEEL_DATA_DIR=var/run-smollm2-cpu
exec .venv/bin/flywheel run --base-model smollm2 --generations 3 --examples 120 --admission auto \
  --train sft_steps=24 --train sft_batch_size=2 --train rl_steps=1 --train num_generations=4 \
  --train max_tool_calls=2 --train eval_templates=4 --train eval_max_steps=4 --train eval_batch_size=1 \
  --train eval_dtype=bfloat16 --evolve-templates 4 --evolve-n 2 --evolve-proposals 2
