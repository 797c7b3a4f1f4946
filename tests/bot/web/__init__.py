"""Tests for bot/web/."""
