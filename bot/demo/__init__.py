"""The demo: `demo.py` (the bundled sample repository and issue under `sample/`, run by `stepwise
demo`), `scripted_llm.py` (a scripted OpenAI-compatible server on loopback, for `demo
--llm-scripted` and the tests) and `llm_demo.py` (the demo of the llm recipe).

Contract: only the CLI's demo command (bot/cli/demo.py) imports this folder.
"""
