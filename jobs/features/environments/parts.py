"""The environments feature's pure parts, installed by the composition roots with the other
features' (jobs/composition.py): its part of the record (record.py) and the field it replaced,
the plan's `Setup:` lines (texts.py), and what a baseline's key and a reloaded config ask of it."""

from __future__ import annotations

from jobs.features.environments.record import (
    FORMER_FIELDS,
    EnvironmentRecord,
    baseline_inputs,
    config_reloaded,
)
from jobs.features.environments.texts import setup_lines
from jobs.kernel.feature_parts import CardSection, FeatureParts

PARTS = FeatureParts("environments", card_sections=(CardSection(plan=setup_lines),),
                     job_part=EnvironmentRecord, former_fields=FORMER_FIELDS,
                     baseline_inputs=baseline_inputs, config_reloaded=config_reloaded)
