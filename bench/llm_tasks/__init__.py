"""The model benchmark: maintenance tasks on generated repositories, run per edit format
against any OpenAI-compatible endpoint (or a scripted model): `make bench-llm`."""
