"""Part of shelf."""
