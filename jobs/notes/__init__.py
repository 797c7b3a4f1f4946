"""What a person reads, rendered from the record (pure): `progress.py` (the plan, the gate prompt
and the progress card), `change_note.py` (the change note, assembled from its sections; a feature
adds its own through kernel/feature_parts.py), `note_parts.py` (their pieces: commands in words,
the batch size, left-out files, reverts, retries), `tally.py` (the one count of batches, files,
leftovers and commits by people every surface shows), `annotations.py` (a failing command's output
read: its tail around the failing test's report, the file and line findings in it), `check_runs.py`
(Stepwise's own check runs), `config_check.py` (the `Stepwise config` check run), `shape_lines.py`
(edit shapes in words: the gates', the card's and a campaign dashboard's).

Contract: a record in, text out; untrusted text goes through basics/markdown_safe.py and
basics/redact.py, and every text fits GitHub's limits (basics/github_limits.py).
"""
