"""Tests for bot/observability/."""
