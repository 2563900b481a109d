"""`borrowed-keys store repair-clock --db FILE`: a SQLite store locked by a clock ahead,
brought back to the machine's clock (core/engine/clock_repair.py says how, and when not)."""

import argparse
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    s = sub.add_parser("store", help="look after a store file (repair-clock)")
    inner = s.add_subparsers(dest="store_command", metavar="STORE_COMMAND", required=True)
    r = inner.add_parser(
        "repair-clock",
        help="bring a SQLite store back after a process whose clock ran ahead wrote to it "
        "(refused while a lease granted on this machine's clock is live)",
    )
    r.add_argument("--db", required=True, metavar="FILE", help="the SQLite store file")
    r.set_defaults(handler=repair_clock_command)


def repair_clock_command(args: argparse.Namespace) -> int:
    from core.engine.clock_repair import TOLERANCE_MS, instant, repair_clock
    from core.engine.errors import StoreError

    prog = "borrowed-keys store repair-clock"
    try:
        repair = repair_clock(args.db)
    except StoreError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if not repair.needed:
        newest = "no instant yet" if repair.newest is None else instant(repair.newest)
        print(
            f"Nothing to repair: the store's newest instant ({newest}) is not ahead of this "
            f"machine's clock ({instant(repair.now)}) by more than {TOLERANCE_MS} ms."
        )
        return 0
    if repair.live:
        for task, owner, until in repair.live:
            print(
                f"{prog}: not repaired: the lease of {task} held by {owner} was granted on "
                f"this machine's clock and is live until {instant(until)}; nothing was changed",
                file=sys.stderr,
            )
        return 2
    assert repair.newest is not None
    expired = f"; the leases the clock ahead granted were expired: {', '.join(repair.expired)}"
    print(
        f"Repaired: the store's newest instant moved back from {instant(repair.newest)} to "
        f"{instant(repair.now)}{expired if repair.expired else ''}."
    )
    return 0
