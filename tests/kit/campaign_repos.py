"""Small service repositories for campaigns (tests and bench/campaign.py): `app/user.py` calls
`old()`; the campaign's spec moves it to `new()`, which a broken service's `app/lib.py` lacks,
so its tests fail after the change."""

from __future__ import annotations

CONFIG = ('validate: ["python -m unittest discover -s tests -q"]\nallow_commands: [python]\n'
          "ci:\n  wait: off\n")
LIB = "def old(x):\n    return x\n\n\ndef new(x):\n    return x\n"
USER = "from app.lib import old\n\n\ndef double(x):\n    return old(x) * 2\n"
TEST = ("import unittest\n\nfrom app.user import double\n\n\nclass T(unittest.TestCase):\n"
        "    def test_double(self):\n        self.assertEqual(double(2), 4)\n")


def service_files(*, broken: bool = False) -> dict[str, str | bytes]:
    """A service's files (its config is CONFIG); broken: `new` is missing from app/lib.py."""
    lib = LIB.split("\n\n\n")[0] + "\n" if broken else LIB
    return {"app/__init__.py": "", "app/lib.py": lib, "app/user.py": USER,
            "tests/__init__.py": "", "tests/test_user.py": TEST}
