"""`python -m tests.kit.chaos` (`make chaos`): see tests/kit/chaos/__init__.py."""

import sys

from jobs.editors import BUILT_IN, install_recipes
from tests.kit.chaos.command import main

install_recipes(BUILT_IN)  # this program's composition root: it reads the stored records
sys.exit(main())
