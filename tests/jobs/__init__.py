"""Tests for the engine package, jobs/."""
