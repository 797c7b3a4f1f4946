"""Tests for jobs/adapters/."""
