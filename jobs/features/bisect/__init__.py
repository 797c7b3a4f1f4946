"""Split batches (bisection) and `batch_size: auto` (DESIGN.md, "Split batches").

Contract: when a batch of more than one file fails validation (`replace` and `command` at
the first failure, `llm` after its attempts), parts of its edit are validated as candidate
trees (the base plus those files' edits) until the failing files are found: each file alone
in a batch of at most 4, halves above, on the failing tests only first where the runner named
them (strategy.py); a culprit's own batch runs those tests first too (focus_first.py).
The passing files are committed as the batch (trailer `Stepwise-Split: <files set aside>`);
each culprit becomes a batch of its own, numbered after the last batch, that goes to the
`failure` gate alone; files that fail only together (two or more) are narrowed to just those
files and set aside together as an interaction. Every validated subset is kept in the batch's
record (its part, record.py), so a crash resumes the bisection without validating a decided
subset again.
With `ci.wait: per_batch`, a red required check on a multi-file batch's commit splits it the
same way: first without the files the failing checks' annotations name, each candidate
validated locally and then by CI (by_ci.py).

`batch_size: auto` starts at 2, doubles after each passing batch and halves after a failure,
up to `batch_size_max`: before each planned batch starts, the planned batches not started yet
are regrouped (numbers of started batches never change).

- record.py: its part of a batch's record (`Batch.parts["bisect"]`: the split, where a
  set-aside batch came from, the `auto` size), read from the batch's former fields too, and
  the figures others read of it (`SET_ASIDE_FROM`, `SPLIT_VALIDATIONS`).
- rules.py: the bisection as a pure function of the decided results.
- strategy.py: how a batch is split, from its size and its validation's measured cost (pure).
- focus_first.py: a set-aside batch validated on its failing tests first (its `validation`
  hook).
- sizing.py: the `auto` sizing rule and the regrouping of batches not started (pure).
- candidates.py: a candidate tree: the head plus some files of the failed edit.
- resize.py: regrouping the batches not started (`batch_size: auto`), before each batch.
- by_ci.py: a split a red CI check started: candidate commits pushed for CI, withdrawn (through
  the `CiCandidates` protocol it declares; jobs/composition.py gives it CI's).
- notes.py: what the card and the change note say of split batches and `auto` sizes (its card
  and note sections, `PARTS`).
- wiring.py: the feature's entry in the features' tuple (`bisect_feature`, its batch hooks).
- driver.py: the engine side (`BisectHooks`, the hooks jobs/local.py and bot/server give the
  engine): candidate trees, validation, commit, set-aside batches. Importing the package does
  not import it, so the pure rules load without the engine.
"""
