"""`python -m demo [FILE] [--lang en|zh]`: the terminal app."""

import sys

from demo.app import run_app

sys.exit(run_app(sys.argv[1:]))
