"""Tests for the task suite: templates, generation, checkers, policies, the no-leak check, CLI."""
