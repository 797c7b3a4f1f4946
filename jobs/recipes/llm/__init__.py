"""The llm recipe, every language-model part of Stepwise:

- `recipe.py` (its spec rules and editor factory), `editor.py` (one batch's edit), `settings.py`
  (the endpoint, model and budget), `client.py` (the `openai` client).
- `context.py` (requests and windows), `answer.py` and `apply.py` (reading and applying the
  answered diffs), `formats.py` (`search_replace` and `whole` answers as diffs), `feedback.py`
  (what a failed validation tells the next round), `rounds.py` (one attempt's rounds),
  `summaries.py` (what the model said of each file it changed).
- `accounting.py` (budget, transcripts), `draft.py` (drafted specs), `funnel.py` (a command's
  `fallback: llm`); `tools/` the tool-using attempt.

Contract: the engine never imports this folder (an import contract); it reaches it through the
editor factory and the llm feature's hooks.
"""
