"""The `stepwise` command line (typer): `main.py` (the app, local mode's commands, `main`),
`output.py` (what the commands print, errors and exit codes), `config.py` (`stepwise
check-config`), `demo.py` (`stepwise demo`, the only importer of bot/demo/), `campaign.py`
(`stepwise campaign`) and `server.py` (`serve`, `worker`).

Contract: the top of bot's layers: it composes (jobs/composition.py `install`) and prints; a
bad input exits 2 with a message that names the fix.
"""
