"""The web app: the FastAPI factory, the webhook route and the metrics route."""
