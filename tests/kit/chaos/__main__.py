"""`python -m tests.kit.chaos` (`make chaos`): see tests/kit/chaos/__init__.py."""

import sys

from jobs.composition import install
from tests.kit.chaos.command import main

install()  # this program's composition root: it reads the stored records
sys.exit(main())
