"""The language-model side of Stepwise: client, context, diff checks, accounting, drafting (its
settings, which the engine and the editor factory name too: jobs/editors/llm_settings.py)."""
