"""GitHub: the githubkit client, the forge port on GitHub, the mirror of cached clones."""
