"""The rollout service: runs episodes of proposed tasks with a policy around a device."""
