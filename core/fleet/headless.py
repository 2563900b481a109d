"""`borrowed-keys fleet --headless`: real workers, random real faults, a verdict.

The faults are the app's buttons (the one table, core/fleet/faults.py), pressed by a seeded
random hand on a worker that holds a lease: Kill (SIGKILL, restarted a moment later under
the same id), Stall (SIGSTOP past its lease's expiry, then SIGCONT; an agent worker whose
writes go through the service is stopped with its next write on its way out, and continued
once another holder has finished its task, so that write lands late, with its old token),
Freeze (its heartbeat stops while its work goes on, then thaws) and Restart. The
supervisor's clock only paces the hand; the database's clock judges every lease. With a
steady queue (`arrivals`, the default) new tasks keep coming and the run ends after
`seconds`; with a fixed batch (`--tasks`) it ends sooner once every task is done. Then the
whole history is checked again from its first row.
"""

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from core.engine.people import called
from core.fleet.arrivals import Arrivals
from core.fleet.faults import HAND_FAULTS, FaultAct
from core.fleet.frame import FrameMaker
from core.fleet.supervisor import Fleet
from core.fleet.verdict import Finding, HistoryCheck
from core.fleet.words import word

# How often the hand presses a button, in lease lengths between two faults.
_GAP = (0.6, 1.4)


@dataclass
class HeadlessRun:
    """What happened: faults pressed, workers that died on their own, the final check."""

    faults: list[tuple[FaultAct, str]] = field(default_factory=list)
    died: dict[str, int | None] = field(default_factory=dict)
    live_findings: list[Finding] = field(default_factory=list)
    findings_told: int = 0  # how many of the running checker's findings were said
    check: HistoryCheck | None = None
    seconds: float = 0.0
    finished: bool = False
    frames: list[dict[str, object]] = field(default_factory=list)  # when recorded
    # How busy the workers were: at each look, the running workers and those of them that
    # said they held a lease (what a fault would have hit).
    looked: int = 0
    holding: int = 0
    # the same per worker: a pooled share could hide one idle worker behind busy ones
    looked_by: dict[str, int] = field(default_factory=dict)
    holding_by: dict[str, int] = field(default_factory=dict)
    steady: bool = False  # a steady queue: the run ends when its time is up, by design

    def sample(self, fleet: Fleet) -> None:
        running = [w for w in fleet.workers.values() if w.alive and w.ready and not w.stalled]
        self.looked += len(running)
        self.holding += sum(1 for w in running if w.belief.task is not None)
        for w in running:
            self.looked_by[w.worker_id] = self.looked_by.get(w.worker_id, 0) + 1
            held = int(w.belief.task is not None)
            self.holding_by[w.worker_id] = self.holding_by.get(w.worker_id, 0) + held

    @property
    def busy_share(self) -> float | None:
        """The share of looks at a running worker that found it holding a lease."""
        return self.holding / self.looked if self.looked else None

    @property
    def least_busy(self) -> tuple[str, float] | None:
        """The worker that held a lease the smallest share of the looks at it running, and
        that share."""
        shares = {w: self.holding_by.get(w, 0) / n for w, n in self.looked_by.items() if n}
        if not shares:
            return None
        worker = min(shares, key=lambda w: (shares[w], w))
        return worker, shares[worker]


def parse_faults(text: str) -> tuple[FaultAct, ...]:
    """`random` (every fault the hand presses), `none`, or a comma list of their names."""
    text = text.strip().lower()
    if text == "random":
        return HAND_FAULTS  # a partition is left out where there is no relay to cut
    if text in ("none", ""):
        return ()
    by_name = {a.hand: a for a in HAND_FAULTS}
    out = []
    for name in text.split(","):
        act = by_name.get(name.strip())
        if act is None:
            names = ", ".join(a.hand for a in HAND_FAULTS if a.hand is not None)
            raise ValueError(
                f"unknown fault {name.strip()!r}: say random, none, or some of {names}"
            )
        out.append(act)
    return tuple(out)


def run_headless(
    fleet: Fleet,
    *,
    workers: int,
    tasks: int | None,
    seconds: float,
    faults: tuple[FaultAct, ...],
    seed: int,
    say: Callable[[str], None] = print,
    tick_s: float = 0.1,
    lang: str = "en",
    record: bool = False,
    arrivals: Arrivals | None = None,
) -> HeadlessRun:
    """Run the fleet until `seconds` pass or every task is done; judge the history.
    `record`: read a frame of the screen at each tick, as the app would, and keep the
    frames a save keeps (`run.frames`), so that `export` can draw the screen of this run."""
    rng = random.Random(seed)
    maker = FrameMaker(fleet, record=True) if record else None
    if maker is not None:
        maker.with_timeline = False  # rebuilt from the history by whoever draws it
    if fleet.relays is None:
        faults = tuple(f for f in faults if not f.needs_relay)
    ttl_s = fleet.settings.ttl_ms / 1000
    run = HeadlessRun(steady=arrivals is not None)
    for _ in range(workers):
        w = fleet.add_worker()
        say(word("started", lang, worker=called(w.worker_id, lang), pid=w.pid))
    if tasks is not None:
        fleet.enqueue(tasks)
    start = time.monotonic()
    next_fault = start + rng.uniform(*_GAP) * ttl_s
    undo: list[tuple[float, Callable[[], object]]] = []
    expected_down: set[str] = set()
    while True:
        now = time.monotonic()
        if maker is not None:
            maker.frame()
        else:
            fleet.poll()
        _tell_violations(fleet, run, say, lang)
        for wid, w in fleet.workers.items():
            if not w.alive and wid not in expected_down and wid not in run.died:
                run.died[wid] = w.exit_status
                say(word("died", lang, worker=called(wid, lang), pid=w.pid, status=w.exit_status))
        for item in [u for u in undo if u[0] <= now or _early(u[1])]:
            undo.remove(item)
            item[1]()
        if now - start >= seconds:
            break
        if arrivals is not None:
            fleet.feed(arrivals, now)
        elif not undo and fleet.resting():
            run.finished = True
            break
        run.sample(fleet)
        # While a worker is stopped with a write on its way out, the hand waits: another
        # fault on the holder that takes its task over would hold that holder's write too,
        # and the late write would race the newer one instead of following it.
        waiting = any(isinstance(a, _Undo) and a.task is not None for _t, a in undo)
        if faults and now >= next_fault and not waiting:
            _press(fleet, rng, faults, run, undo, expected_down, now, ttl_s, say, lang)
            next_fault = now + rng.uniform(*_GAP) * ttl_s
        time.sleep(tick_s)  # the hand's pace: nothing waits on this for a verdict
    for _at, action in undo:
        action()
    fleet.stop_workers()
    if maker is not None:
        maker.frame()
        run.frames = maker.log.saved() if maker.log is not None else []
    else:
        fleet.poll()
    _tell_violations(fleet, run, say, lang)
    run.seconds = time.monotonic() - start
    run.check = fleet.final_check()
    return run


def _tell_violations(fleet: Fleet, run: HeadlessRun, say: Callable[[str], None], lang: str) -> None:
    """Say each violation the running checker found since the last look."""
    run.findings_told, found = fleet.found.read(run.findings_told)
    for f in found:
        run.live_findings.append(f)
        say(word("violation", lang, detail=f.sentence(lang).rstrip(".。")))


def _press(
    fleet: Fleet,
    rng: random.Random,
    faults: tuple[FaultAct, ...],
    run: HeadlessRun,
    undo: list[tuple[float, Callable[[], object]]],
    expected_down: set[str],
    now: float,
    ttl_s: float,
    say: Callable[[str], None],
    lang: str,
) -> None:
    touched = {getattr(a, "worker_id", None) for _t, a in undo}
    candidates = [
        wid
        for wid, w in fleet.workers.items()
        if w.alive
        and w.ready  # a worker still connecting would only fail to start
        and not w.stalled
        and not w.frozen
        and not fleet.partitioned(wid)
        and wid not in touched
    ]
    holders = [wid for wid in candidates if fleet.workers[wid].belief.task is not None]
    pool = holders or candidates
    if not pool:
        return
    wid = rng.choice(pool)
    fault = rng.choice(faults)
    w = fleet.workers[wid]
    run.faults.append((fault, wid))
    held = word("holding", lang, task=w.belief.task) if w.belief.task else ""
    old = w.pid
    if fault.down_until_undone:
        expected_down.add(wid)
    getattr(fleet, fault.fleet)(wid)
    name = called(wid, lang)
    write = w.write_held
    task = w.belief.task  # read again: a worker found idle claims before its write
    if write is not None and fault.said_held:
        held = word("holding", lang, task=task) if task else ""
        target, token = write.get("key"), write.get("token")
        said = word(
            fault.said_held, lang, worker=name, pid=w.pid, held=held, target=target, token=token
        )
    else:
        said = word(fault.said, lang, worker=name, pid=w.pid, held=held, old=old)
    say(said)
    if fault.undo is not None:
        at = now + rng.uniform(*fault.undo_after) * ttl_s  # drawn always: a seed replays
        taken = _Undo(fleet, fault, wid, expected_down, say, lang)
        if write is not None and task is not None:
            # Taken back once another holder has finished the task, so the write it was
            # stopped with lands after the newer one: a late write, certain, never a hang.
            at = now + fault.undo_after_held * ttl_s
            taken.task = task
        undo.append((at, taken))


def _early(action: Callable[[], object]) -> bool:
    """Whether a fault is to be taken back before its time: the task its worker was
    stopped holding (with a write on its way out) has been finished by another."""
    return isinstance(action, _Undo) and action.task is not None and action.ready()


@dataclass
class _Undo:
    """A fault taken back by the method its row names, and said."""

    fleet: Fleet
    fault: FaultAct
    worker_id: str
    expected_down: set[str]
    say: Callable[[str], None]
    lang: str
    task: str | None = None  # held with a write on its way out: taken back once it is done

    def ready(self) -> bool:
        return self.task is not None and self.fleet.taken_over(self.task)

    def __call__(self) -> None:
        assert self.fault.undo is not None
        late = self.task is not None and bool(self.fault.undone_held)
        getattr(self.fleet, self.fault.undo)(self.worker_id)
        if self.fault.down_until_undone:
            self.expected_down.discard(self.worker_id)
        pid = self.fleet.workers[self.worker_id].pid
        name = called(self.worker_id, self.lang)
        undone = self.fault.undone_held if late else self.fault.undone
        self.say(word(undone, self.lang, worker=name, pid=pid))


def verdict_lines(run: HeadlessRun, fleet: Fleet, lang: str = "en") -> list[str]:
    """The verdict in sentences."""
    check = run.check
    assert check is not None
    lines = [
        word(
            "summary",
            lang,
            n=len(fleet.workers),
            seconds=f"{run.seconds:.0f}",
            faults=len(run.faults),
            claims=check.claims,
            completed=check.completed,
            accepted=check.accepted_pages,
            refused=check.refused_pages,
        ),
        word("rechecked", lang, events=check.events),
    ]
    if run.busy_share is not None:
        line = word("busy", lang, share=f"{100 * run.busy_share:.0f}")
        if run.least_busy is not None and len(run.looked_by) > 1:
            worker, share = run.least_busy
            line += word(
                "least_busy", lang, worker=called(worker, lang), share=f"{100 * share:.0f}"
            )
        lines.append(line)
    if not run.finished and not run.steady:
        lines.append(word("unfinished", lang))
    for wid, status in run.died.items():
        lines.append(
            word("died", lang, worker=called(wid, lang), pid=fleet.workers[wid].pid, status=status)
        )
    if check.findings:
        lines.append(word("broken", lang, n=len(check.findings)))
        lines.extend(f"  {f.sentence(lang)}" for f in check.findings[:20])
    else:
        lines.append(word("held", lang))
    return lines


def write_lines(lines: list[str], out: TextIO) -> None:
    for line in lines:
        print(line, file=out)
