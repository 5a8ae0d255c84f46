import sys

from stellar.cli.main import main

sys.exit(main())
