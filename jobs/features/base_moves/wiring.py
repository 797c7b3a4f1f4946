"""The base_moves feature's entry in the features' tuple (jobs/composition.py)."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.base_moves.merge import follows_a_base, moved_base_notice, update_from_base
from jobs.features.base_moves.parts import PARTS
from jobs.features.base_moves.record import base_pushed

FEATURE = Feature("base_moves", active=follows_a_base, safe_point=update_from_base, parts=PARTS,
                  resume_notice=moved_base_notice, base_pushed=base_pushed)
