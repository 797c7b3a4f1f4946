"""Tests for bot/server/."""
