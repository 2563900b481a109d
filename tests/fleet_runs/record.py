"""Record tests/fleet_runs/stalled_run.jsonl again: a short real run on SQLite.

    .venv/bin/python -m tests.fleet_runs.record

Two worker processes and one task (1.5 s leases): w1 holds t1, is stalled past its expiry,
w2 claims, w1 is resumed and its next page is refused as fenced; w2 completes t1. A frame
of the screen is read every 0.1 s, as the app reads it, so the file keeps the screen's
frames as `s` would. Not a test: the tests read the file it writes.
"""

import tempfile
import threading
from pathlib import Path

from core.fleet.frame import FrameMaker
from core.fleet.supervisor import Fleet, FleetSettings

OUT = Path(__file__).parent / "stalled_run.jsonl"
WAIT_S = 60.0


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="bk-record-"))
    settings = FleetSettings(
        db=str(folder / "fleet.db"), ttl_ms=1500, poll_ms=150, steps=4, step_ms=500
    )
    with Fleet(settings, folder / "logs") as fleet:
        maker = FrameMaker(fleet, record=True)
        maker.with_timeline = False
        stop = threading.Event()

        def read() -> None:
            while not stop.wait(0.1):
                maker.frame()

        reader = threading.Thread(target=read)
        reader.start()
        try:
            fleet.enqueue(1)
            w1 = fleet.add_worker()
            assert w1.wait_for(
                lambda ln: ln.get("t") == "belief" and ln.get("step") is not None, WAIT_S
            )
            fleet.stall("w1")
            mark = len(w1.said())
            w2 = fleet.add_worker()
            assert w2.wait_for(lambda ln: ln.get("event") == "claimed", WAIT_S)
            fleet.resume("w1")
            refused = w1.wait_for(lambda ln: ln.get("event") == "write_rejected", WAIT_S, mark)
            assert refused is not None
            assert w2.wait_for(lambda ln: ln.get("event") == "completed", WAIT_S)
            fleet.stop_workers()
        finally:
            stop.set()
            reader.join()
        maker.frame()
        assert maker.log is not None
        check = fleet.save(OUT, maker.log.saved())
        print(f"{OUT}: {check.verdict.name.lower()}, {len(maker.log.saved())} frames")


if __name__ == "__main__":
    main()
