"""The main screen's session runner at the screen's end: `finish` runs the last job (closing
the run's store, dropping its PostgreSQL schema) after every job asked for before it, and
before it returns, whether the thread is working or has just stopped."""

from collections.abc import Callable
from typing import Any

from textual.message import Message

from core.scenarios.session import Session
from demo.screens.session_runner import SessionRunner


class Screen:
    """A stand-in screen: its worker is run when the test says, on the thread it chooses."""

    def __init__(self) -> None:
        self.posted: list[Message] = []
        self.workers: list[Callable[[], None]] = []

    @property
    def session(self) -> Session:
        raise AssertionError("the jobs here do not read the session")

    def post_message(self, message: Message) -> bool:
        self.posted.append(message)
        return True

    def run_worker(
        self, work: Callable[[], None], *, thread: bool, group: str, exit_on_error: bool
    ) -> Any:
        self.workers.append(work)
        return None


def _runner() -> tuple[SessionRunner, Screen, list[str]]:
    screen = Screen()
    return SessionRunner(screen, off_loop=True), screen, []


def test_the_last_job_waits_for_the_thread_and_comes_after_the_jobs_before_it() -> None:
    runner, screen, done = _runner()
    runner.do(lambda: done.append("step"), None, None)
    assert len(screen.workers) == 1 and done == []  # the thread is started, not yet run
    # the thread has not got to it: finish gives up after its wait and leaves it queued
    assert runner.finish(lambda: done.append("close"), timeout_s=0) is False
    assert done == []
    screen.workers[0]()  # the thread runs: the step, then the close, in order
    assert done == ["step", "close"]


def test_the_last_job_is_done_when_finish_returns_whoever_runs_it() -> None:
    import threading

    runner, screen, done = _runner()
    runner.do(lambda: done.append("step"), None, None)
    # the thread runs beside the call: it may take the close or have stopped before it
    thread = threading.Thread(target=screen.workers[0])
    thread.start()
    assert runner.finish(lambda: done.append("close")) is True
    assert done == ["step", "close"]
    thread.join()


def test_a_thread_that_has_stopped_leaves_its_jobs_to_finish() -> None:
    runner, screen, done = _runner()
    runner.do(lambda: done.append("first"), None, None)
    screen.workers[0]()  # ran and stopped; its idle message is not read yet
    runner.do(lambda: done.append("second"), None, None)  # queued: no thread takes it
    assert len(screen.workers) == 1
    assert runner.finish(lambda: done.append("close"), timeout_s=0) is True
    assert done == ["first", "second", "close"]
