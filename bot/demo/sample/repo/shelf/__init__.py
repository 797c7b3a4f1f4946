"""shelf: a tiny shop library."""
