"""Tests for bot/commands/."""
