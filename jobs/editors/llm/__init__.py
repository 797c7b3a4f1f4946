"""The language-model side of Stepwise: settings, client, context, diff checks, accounting, drafting."""
