"""The base branch moved (DESIGN.md, README "When the base branch moves: `update_from_base`").

Contract: at each safe point of a running job (after CI's verdict and the branch read again),
when the base branch has commits the job branch does not hold, the base is merged into the job
branch as a merge commit validated like a batch (never a rebase): with `update_from_base:
conflicted` only when the merge would conflict (or the base's protection requires up-to-date
branches), with `behind` whenever the base moved, never with `never`. A conflicting file a
completed batch edited is first replayed by that batch's recipe on the base's version (through
the editor, the diff guard and the sandbox a batch uses); a conflict no recipe can replay (or a
merge GitHub refuses because it changes workflow files) opens the `conflict` gate until a
maintainer merges on the branch and approves. A merge that fails validation, or whose replay
fails, opens the `failure` gate (cause `base_merge`; `approve` goes on without that base).
A merge is recorded before its push and found again by its trailers
(`Stepwise-Base-Merge: <sha>`), so a worker dying mid-merge never leaves a second one.

- Config: `update_from_base` (top-level key of the repository config: `conflicted`, `behind`,
  `never`), read from `RepoConfig` (jobs/inputs/config.py).
- Record: its part, `Job.parts["base_moves"]` (record.py `BaseMoves`, read with `moves(job)`):
  `merges` (`BaseMerge`: each merge, its validation and replays), `conflict` (`BaseConflict`:
  the open conflict's base and files), `checked`, `moved_at`, `declined`. Records of earlier
  releases kept them as the job's fields `base_merges`, ...: parts.py names them
  (`former_fields`) and the kernel reads them into the part. Its merge commits are a
  `CommitKind` (parts.py): reading the branch back finds one a dead worker left unrecorded.
- Gates: `conflict` (its own, parts.py: `approve` continues on the branch as the maintainer
  merged it) and the `failure` gate's cause `base_merge` (its sub-row, parts.py: `approve`
  goes on without that base until it moves again, `moves(job).declined`).
- Hooks: `safe_point` (merge.py `update_from_base`), run only for a job that
  `follows_a_base` (merge.py, the `active` guard of wiring.py). Local mode says a waiting job's
  base moved before showing its gate (merge.py `moved_base_notice`, the `resume_notice` hook);
  the server marks a waiting job when its base is pushed (record.py `base_pushed`, the hook of
  the same name). Both reach it through jobs/composition.py.
- Note: the "Base merges" section (slot `after_left_out`: after the files left out, before the
  model usage). Card: its closing lines (the merges so far, a move not looked at yet).

Modules:
- rules.py: `decide_base_update`, pure: nothing, a merge, a replay or the `conflict` gate.
- texts.py: the merge commit's message, the note's section, the card's lines, the gates'
  reasons (pure).
- record.py: its part of the record (`BaseMoves`), pure.
- parts.py: the part's registration, the merge commits' kind, the `conflict` gate's row, the
  note and card sections (`PARTS`).
- merge.py: the engine side: the facts from git, the merge, the replay, the gates.
- port.py: the one question it asks of the forge (is the base branch strict?), through CI's port.
- wiring.py: `FEATURE`, the line of jobs/composition.py, with its `active` guard.
"""
