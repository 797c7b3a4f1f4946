"""Metrics, structured logs and the logging set-up shared by the web app and the workers."""
