"""Adapters: the engine's ports implemented on git, the sandbox, files and the egress proxy."""
