"""Tests for jobs/recipes/."""
