"""The features the engine's unit tests build their `Services` with: the loop's own
(jobs/composition.py `FEATURES`) but split batches, since these tests pin a failed batch's own
path (the retries, then the `failure` gate)."""

from __future__ import annotations

from jobs.composition import FEATURES

WITHOUT_BISECT = tuple(f for f in FEATURES if f.name != "bisect")
