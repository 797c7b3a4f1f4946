"""GitHub-facing: the command line, the web app, the worker tasks, the GitHub adapter, the task
center and the demo; it uses the engine in jobs/, never the reverse."""
