"""``python -m rgrasp_viz``."""

import sys

from ._cli import main

sys.exit(main())
