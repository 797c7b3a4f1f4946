"""What every pure room uses (pure, lowest layer): `errors.py` (the error types, each with its code
and the hint that names the fix), `markdown_safe.py` (untrusted text as data in Markdown: the
one escaper every rendered note, card and check run goes through), `redact.py` (secrets taken
out of text), `github_limits.py` (GitHub's body limits, counted as GitHub counts them, and
fitting a text into them) and `voice.py` (how each surface writes a command: `/stepwise <verb>`
on GitHub, the CLI locally).

Contract: imports nothing of Stepwise's; no I/O.
"""
