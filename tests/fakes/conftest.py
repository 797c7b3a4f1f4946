"""Fixtures for the fakes' own tests; other test packages import the same two from tests.fakes.github."""

from tests.fakes.github import fake_github, fake_github_factory

__all__ = ["fake_github", "fake_github_factory"]
