"""Tests for jobs/engine/."""
