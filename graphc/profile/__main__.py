"""``python -m graphc.profile``: the ``graphc-prof`` command line."""

import sys

from graphc.profile.cli import main

sys.exit(main())
