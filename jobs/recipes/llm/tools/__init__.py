"""The tool-using attempt of the llm recipe: `schemas.py` (the tools and their arguments),
`scope.py` (what they may read and write), `reading.py`, `outline.py`, `matching.py` and
`editing.py` (the tools), `net.py` (the safety net), `compaction.py`, `prompt.py` and `loop.py`
(the conversation).

Contract: a tool reads and writes only inside the batch's scope, through the worktree; what the
model asks for is data, never a program Stepwise runs.
"""
