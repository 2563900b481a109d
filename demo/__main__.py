"""`python -m demo [FILE] [--lang en|zh] ...`: the terminal app (`borrowed-keys tui`)."""

import sys

from demo.cli import main

sys.exit(main(["tui", *sys.argv[1:]]))
