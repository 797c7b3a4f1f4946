"""Tests for jobs/editors/."""
