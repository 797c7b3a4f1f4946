"""What a person writes, read and refused here (pure): `spec.py` (the issue's spec, a pydantic
model) with `spec_block.py` (reading the issue's ```` ```stepwise ```` block) and `recipes.py` (the
recipe registry's mechanism: a recipe's spec rules, the table and its lookups; the recipes
themselves live in jobs/recipes/); `config.py` (the repository's `.github/stepwise.yml`) with its
blocks `ci_config.py` (`ci:`), `llm_config.py` (`llm:`) and `evidence_config.py` (`evidence:`,
`gates:`), `config_errors.py` (the config's problems, each naming its fix) and `yaml_input.py` (the
strict YAML reading and error wording both share); `globs.py`, `programs.py` (the command
allowlist), `batch_sizes.py` (a number or `auto`, and the size a plan starts with), `sandboxing.py`
(what a command may do and how it ended), `caps.py` (every cap on what is kept from untrusted code)
and `key_docs.py` (the key reference tables, from the models).

Contract: a bad input is refused at plan time with a message that names the problem and the
fix; everything a job would refuse later is refused here first. No I/O.
"""
