"""The training library: model loading, SFT, online RL with CARE, DeepSpeed configs (later issues)."""
