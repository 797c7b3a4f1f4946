"""`python -m tests.kit.chaos` (`make chaos`): see tests/kit/chaos/__init__.py."""

import sys

from tests.kit.chaos.command import main

sys.exit(main())
