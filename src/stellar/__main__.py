"""``python -m stellar``: the command line, as ``stellar``."""

import sys

from stellar.cli.main import main

sys.exit(main())
