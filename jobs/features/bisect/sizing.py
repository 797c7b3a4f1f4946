"""`batch_size: auto` (pure): the size of the next batch from the outcomes of the batches
before it, and the regrouping of the planned batches that have not started.

The size starts at 2, doubles after each passing batch and halves after a failing one (a
failure, or a split), never above `batch_size_max` nor below 1; a skipped batch changes
nothing. The batches not started are regrouped in their planned order: the next one gets the
chosen size, the ones after it the sizes it would grow to if every batch passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.inputs.batch_sizes import AUTO_START


def next_size(outcomes: Sequence[bool | None], limit: int) -> int:
    """The size after `outcomes` (True passed, False failed, None neither), from the start."""
    size = min(AUTO_START, limit)
    for passed in outcomes:
        if passed is True:
            size = min(size * 2, limit)
        elif passed is False:
            size = max(size // 2, 1)
    return size


def regroup(files: Sequence[str], first: int, limit: int) -> list[list[str]]:
    """`files` in order, in batches of `first`, then doubling up to `limit`."""
    groups: list[list[str]] = []
    size, rest = first, list(files)
    while rest:
        groups.append(rest[:size])
        rest = rest[size:]
        size = min(size * 2, limit)
    return groups


def milestones_from(start: int, taken: int, count: int, per_milestone: int) -> list[int]:
    """Milestones for `count` batches that follow `taken` batches of milestone `start`."""
    result, milestone, used = [], start, taken
    for _ in range(count):
        if used >= per_milestone:
            milestone, used = milestone + 1, 0
        result.append(milestone)
        used += 1
    return result
