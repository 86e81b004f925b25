"""Wrappers: auto-reset, episode statistics, observation transforms, views and adapters."""
