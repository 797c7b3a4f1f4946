"""What touches the outside world for the engine: git, the sandbox and its egress proxy, job
environments, discovery, the file store, the local forge."""
