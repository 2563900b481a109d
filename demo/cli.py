"""The `borrowed-keys` console script: the TUI by default, `serve` for a browser, the headless
commands otherwise."""

import sys
from collections.abc import Sequence

TUI_COMMANDS = ("tui",)


def run_tui(argv: Sequence[str]) -> int:
    """Start the Textual app (imported only here, so headless commands never load textual)."""
    from demo.app import run_app

    return run_app(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in TUI_COMMANDS:
        return run_tui(args[1:])
    if args[0] == "serve":
        # Imported only here: the web server's packages load for `serve` alone.
        from demo.serve import main as serve_main

        return serve_main(args[1:])
    if args[0].startswith("--") and args[0] not in ("--help", "--version"):
        # `borrowed-keys --lang zh` opens the picker in Chinese: options alone mean the app.
        return run_tui(args)
    from core.tools.cli import main as headless_main

    return headless_main(args)


if __name__ == "__main__":
    sys.exit(main())
