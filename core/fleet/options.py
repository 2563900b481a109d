"""The options of `borrowed-keys fleet`, light (argparse only): the command line lists them
without loading the fleet, the engine or a temporary folder's module; core/fleet/command.py
checks and runs them."""

import argparse


def add_fleet_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=None,
        metavar="PATH|URL",
        help="a SQLite file or postgresql://... (default: a SQLite file in a fresh folder)",
    )
    p.add_argument(
        "--pg",
        action="store_true",
        help="start a PostgreSQL server for this run (the pgserver package), stopped on exit",
    )
    p.add_argument("--workers", type=int, default=3, metavar="N", help="worker processes (3)")
    p.add_argument(
        "--tasks",
        type=int,
        default=None,
        metavar="N",
        help="a fixed batch of N tasks (default: a steady queue, see --rate)",
    )
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        metavar="N",
        help="the steady queue's new tasks a minute (default: a little more than the workers "
        "finish; + and - change it in the app)",
    )
    p.add_argument(
        "--names",
        default=None,
        metavar="A,B,...",
        help="the workers' ids, comma-separated (default: acheng, linzhou, elder, then w4, "
        "w5, ..., shown as worker 4, worker 5)",
    )
    p.add_argument("--ttl", default="6s", help='the lease ttl, e.g. "6s" (default)')
    p.add_argument("--steps", type=int, default=5, metavar="N", help="steps per task (5)")
    p.add_argument("--step-time", default=None, help="time per step (default: a third of the ttl)")
    p.add_argument("--lang", choices=("en", "zh"), default=None, help="en or zh")
    p.add_argument(
        "--self-fence",
        action="store_true",
        help="each worker gives a lease up by itself at its renew deadline if it could not renew",
    )
    p.add_argument(
        "--mode",
        default="correct",
        help="the workers' engine mode: another one plants one of the design's mistakes",
    )
    p.add_argument(
        "--work",
        choices=("tools", "approval", "browser", "mixed"),
        default=None,
        help=(
            "agent workers under the lease library against a fenced service (docs/library.md);"
            " mixed: tools, approval and browser tasks in turn"
        ),
    )
    p.add_argument("--headless", action="store_true", help="no screen: faults, then a verdict")
    p.add_argument(
        "--faults",
        default="random",
        help="headless: random, none, or some of kill, stall, freeze, restart, partition",
    )
    p.add_argument("--seconds", type=float, default=60.0, help="headless: how long at most (60)")
    p.add_argument("--seed", type=int, default=None, help="headless: the faults' random seed")
    p.add_argument(
        "--check",
        default=None,
        metavar="SAVED_RUN",
        help="no fleet: check a saved run's whole history again and print the verdict",
    )
    p.add_argument(
        "--save",
        default=None,
        metavar="FILE",
        help="headless: write the history (JSON lines) and the verdict to FILE",
    )
