"""What touches the outside world for the engine: git, sandbox, discovery, file store, local forge."""
