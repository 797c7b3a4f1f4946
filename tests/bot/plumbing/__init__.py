"""Tests for bot/plumbing/ (the Redis plumbing below the web app and the workers)."""
