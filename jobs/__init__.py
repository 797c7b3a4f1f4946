"""The engine side of Stepwise; it never imports bot/. The pure rooms (basics, inputs, kernel,
decisions, notes) hold what Stepwise knows and decides; ports.py what the engine needs from the
outside; adapters/ provide it; recipes/ edit; engine/ runs the loop; features/ plug into it;
composition.py (the features' and recipes' tuples, `install`) is what each composition root
calls; local.py is local mode's wiring, with `local_numbers.py` (the job a command without
`--number` means), `local_reload.py` (`approve --reload-config`), `local_interrupt.py` (what
Ctrl-C prints) and `local_campaigns.py` (local mode's campaigns: the port over checkouts, the
record and dashboard in `.stepwise-campaigns/`); ports.py has the protocols.

Importing it does nothing else: nothing is registered by importing a module, so a pure module
loads only what it needs (tests/jobs/test_composition.py).
"""
