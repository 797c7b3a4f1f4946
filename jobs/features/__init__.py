"""Features: one folder each, holding a capability's pure rules (config block, record part, gate
rows), its hooks and its port. The engine never imports a feature; local mode and the server
wiring compose them explicitly. One line each:

- bisect/: split a multi-file batch that failed validation, and `batch_size: auto`.
- campaigns/: one spec across many repositories.
"""
