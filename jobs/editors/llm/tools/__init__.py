"""The tool-using attempt of the llm recipe: schemas, reading and editing tools, the loop, its safety net."""
