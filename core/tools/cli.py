"""The command line's one parser, and the headless commands `play`, `check`, `list` and `sql`.

`chaos`, `worker` and `enqueue` register from their own modules; demo/cli.py adds the app's
`tui` and `serve` in front.

`main(argv)` returns the exit status: 0 when every expectation holds, 1 when one fails, 2 for
a file that cannot be played (one line `FILE:LINE: what is wrong` on stderr, no traceback).

A command imports what it runs when it runs: building the parser (and `--help`) loads no
scenario schema, no database and no simulation, so every command starts at once.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from core.engine.modes import Mode
from core.tools import agent_cli, chaos_cli, explore_cli, store_cli
from core.tools.database_option import add_db_option
from core.tools.options import Parser
from core.tools.worker_options import add_worker_parsers

if TYPE_CHECKING:
    from core.scenarios.format import Scenario, ScenarioError
    from core.scenarios.player import Record, SimulationLike
    from core.sim.spec import SimSettings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


# -- output ----------------------------------------------------------------------------------


def _say_error(exc: ScenarioError, lang: str = "en") -> None:
    text = " ".join(exc.in_language(lang).split())  # always exactly one line
    print(text, file=sys.stderr)


def _warnings(scenario: Scenario, lang: str = "en") -> None:
    from core.scenarios.sentences import timing_warnings

    for warning in timing_warnings(scenario, lang):
        print(warning, file=sys.stderr)


class _Human:
    """The readable transcript: rich colours on a terminal, plain text otherwise; each check
    as the app says it, or (`toml`) in the file's form."""

    def __init__(self, lang: str, toml: bool = False) -> None:
        from rich.console import Console

        self.lang = lang
        self.toml = toml
        self.console = Console(
            file=sys.stdout, highlight=False, soft_wrap=True, emoji=False, markup=False
        )

    def __call__(self, record: Record) -> None:
        from rich.text import Text

        from core.scenarios.player import render_line

        text = Text()
        for piece, style in render_line(record, self.lang, toml=self.toml):
            text.append(piece, style=style or None)
        self.console.print(text, end="")


def _json_line(record: Record) -> None:
    import json

    sys.stdout.write(json.dumps(record, ensure_ascii=False, separators=(", ", ": ")) + "\n")


# -- commands --------------------------------------------------------------------------------


def cmd_play(args: argparse.Namespace) -> int:
    from core.scenarios import library
    from core.scenarios.format import ScenarioError
    from core.scenarios.player import PlayResult, folded, play
    from core.scenarios.twin import scenario_twin
    from core.sim.simulation import Simulation

    try:
        scenario = library.open_scenario(args.file)
    except ScenarioError as exc:
        _say_error(exc, args.lang)
        return EXIT_BAD_INPUT
    _warnings(scenario, args.lang)
    emit = _json_line if args.json else _Human(args.lang, toml=args.toml)
    result = PlayResult()

    runs: list[Simulation] = []

    def make_sim(settings: SimSettings) -> SimulationLike:
        # On PostgreSQL each run has a schema of its own; closing the run drops it.
        sim = Simulation(settings, db_path=args.db)
        runs.append(sim)
        return sim

    try:
        records = play(
            scenario, lang=args.lang, make_sim=make_sim, result=result, twin=scenario_twin
        )
        for record in records if args.json else folded(records, args.lang):
            emit(record)
    except ScenarioError as exc:
        sys.stdout.flush()
        _say_error(exc, args.lang)
        return EXIT_BAD_INPUT
    finally:
        for sim in runs:
            sim.close()
    return result.exit_code


def cmd_check(args: argparse.Namespace) -> int:
    from core.scenarios import library
    from core.scenarios.format import ScenarioError
    from core.scenarios.sentences import checked

    status = EXIT_OK
    for name in args.files:
        try:
            scenario = library.open_scenario(name)
        except ScenarioError as exc:
            _say_error(exc, args.lang)
            status = EXIT_BAD_INPUT
            continue
        _warnings(scenario, args.lang)
        print(checked(scenario, args.lang))
    return status


def cmd_list(args: argparse.Namespace) -> int:
    from core.scenarios import library

    files = library.bundled_files()
    if not files:
        print("no bundled scenarios")
        return EXIT_OK
    width = max(len(f.name.removesuffix(".toml")) for f in files)
    for f in files:
        name = f.name.removesuffix(".toml")
        print(f"{name.ljust(width)}  {library.listed_title(f, args.lang)}")
    return EXIT_OK


# What this store's statements hold that the seed's do not, and why: `sql` says it line by
# line under each statement, so "exactly as printed" never hides an addition.
SQL_ADDITIONS: tuple[tuple[str, tuple[str, str]], ...] = (
    (
        ":now",
        (
            "NOW() is the store's clock, read once per transaction (a virtual one in a play)",
            "NOW() 是存储的时钟，每个事务读一次（回放里是虚拟时钟）",
        ),
    ),
    (
        ":ttl",
        (
            "INTERVAL '60 seconds' is the configured lease_ttl",
            "INTERVAL '60 seconds' 即配置的租期 lease_ttl",
        ),
    ),
    (
        ":judge_now",
        (
            "the clock that judges expiry: the store's (a worker's own only in client_clock mode)",
            "判定过期的时钟：存储的时钟（只有 client_clock 模式才用执行者自己的）",
        ),
    ),
    (
        "max_attempts",
        (
            "a dead letter the seed does not have: out of attempts, the task goes to 'dead'",
            "原文没有的死信：次数用尽，任务进入 'dead'",
        ),
    ),
    (
        "fence_token=",
        (
            'the seed\'s production field "fence_token 只增不减的围栏令牌", drawn from one counter',
            "原文生产环境的字段“fence_token 只增不减的围栏令牌”，取自同一个计数器",
        ),
    ),
    (
        "renew_deadline=",
        (
            'the seed\'s fourth minimum field "renew_deadline 下一次续约必须发生在什么时候"',
            "原文最小字段中的第四个：“renew_deadline 下一次续约必须发生在什么时候”",
        ),
    ),
    (
        "result=",
        (
            "the result is kept inline here, where the seed keeps a result_uri",
            "结果直接存在这一行里，原文存的是 result_uri",
        ),
    ),
    (
        "RETURNING",
        (
            "the lease comes back to the caller in the same statement",
            "同一条语句把租约交回调用者",
        ),
    ),
)

# The headings `sql` prints above each statement.
SQL_HEADINGS: dict[str, tuple[str, str]] = {
    "seed": ("-- {name}: the seed, as printed", "-- {name}：原文，照印"),
    "ours": (
        "-- {name}: what this store runs in {mode} mode (SQLite)",
        "-- {name}：本存储在 {mode} 模式下运行的语句（SQLite）",
    ),
    "adds": ("-- {name}: what it adds to the seed's, and why", "-- {name}：比原文多了什么，为什么"),
}


def sql_additions(ours: str, seed: str, lang: str = "en") -> list[str]:
    """The comment lines naming what `ours` adds to `seed`, each with its reason."""
    from core.scenarios.glossary import pick

    colon = "：" if lang == "zh" else ": "
    return [
        f"--   + {needle.strip('=')}{colon}{pick(why, lang)}"
        for needle, why in SQL_ADDITIONS
        if needle in ours and needle not in seed
    ]


def cmd_sql(args: argparse.Namespace) -> int:
    from core.engine.backends.sqlite import dialect
    from core.engine.lease_sql import pretty_update
    from core.engine.policies import SEED_STATEMENTS, policy_for
    from core.engine.statements import statements_for
    from core.scenarios.glossary import pick

    mode = Mode(args.mode)
    ours = statements_for(dialect(), policy_for(mode))
    compiled = {"claim": ours.claim_named, "heartbeat": ours.heartbeat, "complete": ours.complete}
    for name, seed_text in SEED_STATEMENTS.items():
        lang = args.lang
        print(pick(SQL_HEADINGS["seed"], lang).format(name=name))
        print(seed_text)
        print(pick(SQL_HEADINGS["ours"], lang).format(name=name, mode=mode.value))
        print(pretty_update(compiled[name].sql))
        added = sql_additions(compiled[name].sql, seed_text, lang)
        if added:
            print(pick(SQL_HEADINGS["adds"], lang).format(name=name))
            print("\n".join(added))
        print()
    return EXIT_OK


# One command: puts its parser (options and `handler`) on the subparsers it is given.
Register = Callable[[Any], None]


def add_play(sub: Any) -> None:
    p = sub.add_parser("play", help="play a scenario file (or a bundled scenario's name)")
    p.add_argument("file", metavar="FILE", help="a scenario file, or a name from `list`")
    p.add_argument(
        "--lang", choices=("en", "zh"), default="en", help="narration language (default en)"
    )
    p.add_argument("--json", action="store_true", help="JSON Lines instead of a transcript")
    p.add_argument(
        "--toml",
        action="store_true",
        help="each check in the file's TOML form, not as the app's sentence (as t in the app)",
    )
    add_db_option(p)
    p.set_defaults(handler=cmd_play)


def add_check(sub: Any) -> None:
    c = sub.add_parser("check", help="validate scenario files without playing them")
    c.add_argument("files", metavar="FILE", nargs="+", help="scenario files to validate")
    c.add_argument(
        "--lang", choices=("en", "zh"), default="en", help="warning language (default en)"
    )
    c.set_defaults(handler=cmd_check)


def add_list(sub: Any) -> None:
    ls = sub.add_parser("list", help="the bundled scenarios and their titles")
    ls.add_argument(
        "--lang", choices=("en", "zh"), default="en", help="title language (default en)"
    )
    ls.set_defaults(handler=cmd_list)


def add_sql(sub: Any) -> None:
    q = sub.add_parser(
        "sql", help="the seed's Claim, Heartbeat and Complete beside the statements run here"
    )
    q.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=Mode.CORRECT.value,
        help="whose statements to compile (default correct; seed_sql runs the seed's guards)",
    )
    q.add_argument(
        "--lang", choices=("en", "zh"), default="en", help="comment language (default en)"
    )
    q.set_defaults(handler=cmd_sql)


def _worker(args: argparse.Namespace) -> int:
    from core.tools.realworker import worker_command

    return worker_command(args)


def _enqueue(args: argparse.Namespace) -> int:
    from core.tools.realworker import enqueue_command

    return enqueue_command(args)


def add_worker(sub: Any) -> None:
    # the worker's module (the clock, the store's errors, the task kinds) loads when it runs
    add_worker_parsers(sub, worker=_worker, enqueue=_enqueue)


# Every headless command, in the order `--help` lists them. A new command is one line here:
# its module's `add_parser` (the app's own commands are added by demo/cli.py).
COMMANDS: tuple[Register, ...] = (
    add_play,
    add_check,
    add_list,
    add_sql,
    chaos_cli.add_parser,
    explore_cli.add_parser,
    add_worker,
    agent_cli.add_parser,
    store_cli.add_parser,
)


def build_parser(
    prog: str = "borrowed-keys", first: Sequence[Register] = ()
) -> argparse.ArgumentParser:
    """The one parser of `borrowed-keys`: `first` (the app's commands), then COMMANDS."""
    # Parser: an option's mistake is one line, exit 2, in every subcommand too.
    parser = Parser(
        prog=prog,
        description="Leases, heartbeats, fence tokens and checkpoints, played out.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in (*first, *COMMANDS):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None, first: Sequence[Register] = ()) -> int:
    parser = build_parser(first=first)
    args = parser.parse_args(list(argv) if argv is not None else None)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        code: int = handler(args)
    except BrokenPipeError:  # `borrowed-keys play X | head`: stop quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    return code


if __name__ == "__main__":
    sys.exit(main())
