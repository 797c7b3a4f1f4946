"""Tests for bot/github/."""
