"""Tests for the GitHub-facing package `bot`."""
