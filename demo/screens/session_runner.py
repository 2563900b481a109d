"""Where the main screen's session does its work: inline, or off the event loop.

On SQLite in memory a step is microseconds and must stay deterministic for the tests, so
the work runs inline and the screen redraws at once. On PostgreSQL every step's statements
travel the network; run on the event loop they would freeze the screen (keys, the clock,
the toasts) for as long. There the work runs on a worker thread, one job after another in
the order asked, and the thread reads the frame the screen then draws (every read of the
store included), and posts it back as a past-tense message (`SessionWorked`), as
Harlequin does with its queries. A save (`s`) reads the whole transcript from the store: it
runs on the same thread, in turn, and says so with `TranscriptSaved`.
"""

import threading
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text
from textual.message import Message

from core.engine.records import EventRow
from core.scenarios.session import Session
from core.scenarios.twin import header_harm
from core.sim.rules import Harm
from core.sim.snapshot import Snapshot, SnapshotPart
from demo.widgets.narration import narration_text
from demo.widgets.status_header import HeaderState

Then = Callable[[Any], None]


class RunnerScreen(Protocol):
    """What the runner uses of the screen it works for: its session, its messages, and a
    thread to work on."""

    @property
    def session(self) -> Session: ...

    def post_message(self, message: Message) -> bool: ...

    def run_worker(
        self, work: Callable[[], None], *, thread: bool, group: str, exit_on_error: bool
    ) -> object: ...


@dataclass(frozen=True, slots=True)
class Frame:
    """Everything a refresh reads from the session, read at one instant."""

    generation: int
    snap: Snapshot
    events: tuple[EventRow, ...]  # the events after the previous frame's
    narration: Text
    title: str
    forked: bool
    dropped_script: bool
    on_their_own: bool
    question_waits: bool
    undoes: bool
    # The panel the last step played is about, with which step it was: (generation, step
    # index, tab id); the screen opens it once per step.
    opened: tuple[int, int, str] | None = None
    # the mode's harm that is not safety against the correct run's (the header's light)
    harm: tuple[Harm, int, int] | None = None

    def header(self, *, speed: float, playing: bool, lang: str) -> HeaderState:
        """What the header shows of this frame, at the screen's speed and play state."""
        snap = self.snap
        return HeaderState(
            title=self.title,
            now_ms=snap.now_ms,
            speed=speed,
            mode=snap.mode,
            playing=playing,
            forked=self.forked,
            dropped_script=self.dropped_script,
            on_their_own=self.on_their_own,
            violations=tuple((k, v) for k, v in sorted(snap.violations.items()) if v),
            lang=lang,
            harm=self.harm,
        )


@dataclass(frozen=True, slots=True)
class Reading:
    """What the frame is read for: the lists the panel on screen needs, the language, and
    how expectations are shown (read on the loop, before the work is handed off)."""

    parts: Collection[SnapshotPart]
    lang: str
    toml: bool


def read_frame(session: Session, reading: Reading, since: tuple[int, int]) -> Frame:
    """One frame; `since` is the (generation, event seq) the previous frame was read at."""
    snap = session.snapshot(reading.parts)
    generation = session.generation
    seen = since[1] if since[0] == generation else 0
    events = tuple(session.events(seen)) if snap.last_event_seq > seen else ()
    return Frame(
        generation=generation,
        snap=snap,
        events=events,
        narration=narration_text(session, reading.lang, toml=reading.toml),
        title=session.title(reading.lang),
        forked=session.forked,
        dropped_script=session.dropped_script,
        on_their_own=bool(session.handed_over),
        question_waits=session.question is not None,
        undoes=session.undoes,
        opened=_opened(session, generation),
        harm=header_harm(session, snap),
    )


def _opened(session: Session, generation: int) -> tuple[int, int, str] | None:
    outcome = session.last_outcome
    if outcome is None or outcome.panel is None:
        return None
    return (generation, outcome.index, outcome.panel.tab)


class SessionWorked(Message):
    """The session did a job off the loop: its result, what to do with it, the frame after."""

    def __init__(
        self, result: object, then: Then | None, frame: Frame | None, error: BaseException | None
    ) -> None:
        super().__init__()
        self.result = result
        self.then = then
        self.frame = frame
        self.error = error


class TranscriptSaved(Message):
    """A save ran on the session's thread: the files it wrote, or why it wrote none."""

    def __init__(self, paths: list[Path], error: BaseException | None) -> None:
        super().__init__()
        self.paths = paths
        self.error = error


class SessionIdle(Message):
    """The worker thread ran every job it was given."""


class SessionRunner:
    """Runs the screen's session jobs inline, or (`off_loop`) one at a time on a thread."""

    def __init__(self, screen: RunnerScreen, *, off_loop: bool) -> None:
        self.screen = screen
        self.off_loop = off_loop
        self._jobs: deque[Callable[[], Message]] = deque()  # each makes the message it posts
        self._running = False
        # Whether the thread will take another job from the queue: it decides under the lock
        # whether it stops, so a job added under the lock is either taken or known not to be.
        self._lock = threading.Lock()
        self._draining = False
        self._since = (0, 0)  # the (generation, seq) of the last frame read

    @property
    def busy(self) -> bool:
        return self._running or bool(self._jobs)

    def forget_events(self) -> None:
        """The next frame brings every event again (the log is rewritten)."""
        self._since = (0, 0)

    def read(self, reading: Reading) -> Frame:
        frame = read_frame(self.screen.session, reading, self._since)
        if frame.events:
            self._since = (frame.generation, frame.events[-1].seq)
        elif self._since[0] != frame.generation:
            self._since = (frame.generation, 0)
        return frame

    def do(self, work: Callable[[], object], then: Then | None, reading: Reading | None) -> None:
        """On the thread: run `work` and read the frame after it (none without `reading`);
        on the loop, `then(result)` and the frame drawn."""

        def job() -> Message:
            result: object = None
            error: BaseException | None = None
            try:
                result = work()
            except Exception as exc:  # handed to the loop, where it is raised as inline
                error = exc
            frame = self.read(reading) if reading is not None and error is None else None
            return SessionWorked(result, then, frame, error)

        self._queue(job)

    def save(self, write: Callable[[], list[Path]]) -> None:
        """`write` (it reads the transcript from the store and writes the files): inline, or
        on the thread after the jobs before it; then, on the loop, `TranscriptSaved`."""

        def job() -> Message:
            try:
                return TranscriptSaved(write(), None)
            except Exception as exc:  # handed to the loop: an OSError is a toast there
                return TranscriptSaved([], exc)

        if self.off_loop:
            self._queue(job)
        else:
            self.screen.post_message(job())

    def _queue(self, job: Callable[[], Message]) -> None:
        with self._lock:
            self._jobs.append(job)
        if not self._running:
            self._start()

    def _drain(self) -> None:
        """On the worker thread: every job queued, in order; each posts its message."""
        while True:
            with self._lock:
                if not self._jobs:
                    self._draining = False
                    break
                job = self._jobs.popleft()
            self.screen.post_message(job())
        self.screen.post_message(SessionIdle())

    def _start(self) -> None:
        self._running = True
        with self._lock:
            self._draining = True
        self.screen.run_worker(self._drain, thread=True, group="session", exit_on_error=False)

    def finish(self, last: Callable[[], object], *, timeout_s: float = 30.0) -> bool:
        """On the loop, as the screen ends: `last` after every job already asked for, done
        before this returns (the run's store closed, its PostgreSQL schema dropped, before the
        app is gone), on the thread when it is working, else here. False: the thread did not
        get to it within `timeout_s` (a store that stopped answering), and it is left to it."""
        done = threading.Event()

        def job() -> Message:
            try:
                last()
            finally:
                done.set()
            return SessionIdle()

        with self._lock:
            if self._draining:
                self._jobs.append(job)
                handed = True
            else:
                # the thread has stopped (its last message may not be read yet): what it
                # left is run here, in order
                left, self._jobs = list(self._jobs), deque()
                handed = False
        if handed:
            return done.wait(timeout_s)
        for waiting in left:
            waiting()
        job()
        return True

    def idle(self) -> None:
        """On the loop: the thread has stopped; start it again if a job came meanwhile."""
        self._running = False
        if self._jobs:
            self._start()
