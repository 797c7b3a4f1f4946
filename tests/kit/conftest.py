"""Fixtures for the fakes' own tests; other test packages import the same two from tests.kit.github."""

from tests.kit.github import fake_github, fake_github_factory

__all__ = ["fake_github", "fake_github_factory"]
