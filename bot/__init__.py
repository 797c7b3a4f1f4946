"""The entry points: the command line, and (later) the GitHub App web app and its adapter."""
