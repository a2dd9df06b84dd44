"""Alerts of a checkpoint run: where they go (targets), what they say (render), how they are sent (actions)."""
