"""The pure core: records, rules and renderers, with no I/O."""
