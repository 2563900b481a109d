"""Checks shared by the commands' options (one line to say what is wrong, as the CLI does),
and the parser every command uses."""

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

EXIT_BAD_OPTIONS = 2


class Parser(argparse.ArgumentParser):
    """An argparse parser whose mistakes are one line: `PROG: what is wrong (see --help)`,
    exit 2, no usage block (bad input gets one clear line). Its subparsers are of its class
    too (argparse makes them with the parser's own type)."""

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            # argparse leaves words no subcommand knows to the top parser; the line names
            # the subcommand they were given to, as its own mistakes do.
            command = getattr(parsed, "command", None)
            prog = f"{self.prog} {command}" if isinstance(command, str) else self.prog
            _say(prog, f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str) -> NoReturn:
        _say(self.prog, message)


def run_one_command(add_parser: Callable[[Any], None], argv: Sequence[str] | None = None) -> int:
    """Run one command's module on its own (`python -m core.tools.explore_cli explore ...`):
    the same parser as `borrowed-keys`, with that command alone registered."""
    parser = Parser(prog="borrowed-keys")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


def _say(prog: str, message: str) -> NoReturn:
    text = " ".join(message.split())  # always exactly one line
    print(f"{prog}: {text} (see --help)", file=sys.stderr)
    sys.exit(EXIT_BAD_OPTIONS)


def out_of_range(limits: Iterable[tuple[str, int, int, int]]) -> str | None:
    """The first `(option, value, low, high)` whose value is outside [low, high], said in
    one line; None when every value is in range."""
    for name, value, low, high in limits:
        if not low <= value <= high:
            return f"--{name} must be between {low} and {high}, got {value}"
    return None


def out_dir_problem(out_dir: str | Path) -> str | None:
    """Why files could not be written under `out_dir`, or None if they could.

    Asked before a command's work, so that a folder that cannot be made or written is one
    line at once, not a traceback after hours of runs. Nothing is left behind: a folder
    made to try is removed again.
    """
    folder = Path(out_dir)
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"--out {out_dir}: {probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"--out {out_dir}: cannot write in {probe}"
    if probe != folder:
        # Root may write anywhere os.access says; a pseudo-filesystem still says no.
        try:
            folder.mkdir(parents=True)
        except OSError as exc:
            return f"--out {out_dir}: cannot make this folder: {exc.strerror or exc}"
        _remove_made(folder, probe)
    return None


def _remove_made(folder: Path, kept: Path) -> None:
    """Remove the empty folders just made to try, from `folder` up to `kept`."""
    while folder != kept:
        folder.rmdir()
        folder = folder.parent
