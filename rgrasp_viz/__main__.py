"""``python -m rgrasp_viz``."""

import sys

from .cli import main

sys.exit(main())
