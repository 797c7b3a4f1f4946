"""The demo: the bundled sample repository and issue, and the scripted model `stepwise demo` uses."""
