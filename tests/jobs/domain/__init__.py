"""Tests for jobs/domain/."""
