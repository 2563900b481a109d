"""The `borrowed-keys` console script: the TUI by default, the headless commands otherwise."""

import sys
from collections.abc import Sequence

TUI_COMMANDS = ("tui",)


def run_tui(argv: Sequence[str]) -> int:
    """Start the Textual app (imported only here, so headless commands never load textual)."""
    try:
        from demo.app import run_app  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError as exc:
        if exc.name not in ("demo.app", "textual"):
            raise
        print(
            "borrowed-keys: the terminal app is not available yet "
            f"({exc.name} is missing); try `borrowed-keys play FILE` or `borrowed-keys list`",
            file=sys.stderr,
        )
        return 2
    import inspect

    takes_args = bool(inspect.signature(run_app).parameters)
    result = run_app(list(argv)) if takes_args else run_app()
    return int(result) if isinstance(result, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in TUI_COMMANDS:
        return run_tui(args[1:])
    from core.cli import main as headless_main

    return headless_main(args)


if __name__ == "__main__":
    sys.exit(main())
