"""One real worker process: a `borrowed-keys worker --json --control` child, its pid, what
it last said it believes, and the signals the fault buttons send it.

Nothing may outlive the supervisor. Each child runs in a process group of its own (so a
signal reaches it and nothing else, and a Ctrl-C in the terminal does not reach it behind
the supervisor's back); on Linux it asks the kernel to SIGKILL it when its parent dies
(the parent-death signal, `PR_SET_PDEATHSIG`); and everywhere it stops when its standard
input, the control channel, reaches its end, which happens when the supervisor is gone.
"""

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

_PR_SET_PDEATHSIG = 1
# The lines of one incarnation kept in memory: a long session's worker says a belief line
# a step, and nothing reads far back (the frame reads what is new, ten times a second; a
# wait from a mark, woken by each line). Each line is read by its absolute index; those
# before the kept ones are counted. A line is about a kilobyte as Python objects: eight
# busy workers kept 2000 lines each, some 19 MB, for nothing that was ever read again.
MAX_LINES = 500


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """In the child: the kernel sends SIGKILL when the parent thread ends (Linux only)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


@dataclass
class Belief:
    """The last `belief` line a worker printed: its own memory, not the store's truth."""

    state: str = "idle"
    task: str | None = None
    lease_token: int | None = None
    fence_token: int | None = None
    expires_at: int | None = None
    step: int | None = None
    answer_event: str | None = None
    answer_reason: str | None = None
    answer_task: str | None = None

    @classmethod
    def of(cls, line: dict[str, Any]) -> "Belief":
        lease = line.get("lease") or {}
        answer = line.get("answer") or {}
        return cls(
            state=str(line.get("state", "idle")),
            task=lease.get("task"),
            lease_token=lease.get("lease_token"),
            fence_token=lease.get("fence_token"),
            expires_at=lease.get("expires_at"),
            step=line.get("step"),
            answer_event=answer.get("event"),
            answer_reason=answer.get("reason"),
            answer_task=answer.get("task"),
        )


@dataclass
class WorkerProcess:
    """A worker child process, started by `start` and read line by line on a thread."""

    worker_id: str
    command: list[str]
    log_dir: Path
    cwd: Path | None = None
    env: dict[str, str] | None = None
    on_line: Callable[["WorkerProcess", dict[str, Any]], None] | None = None
    proc: subprocess.Popen[bytes] | None = None
    belief: Belief = field(default_factory=Belief)
    # this incarnation's last MAX_LINES lines; `dropped` older ones came before them
    lines: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    stalled: bool = False
    frozen: bool = False
    # The `write_held` line of a downstream write this incarnation keeps on its way out
    # (`hold_writes`), until `send_writes` lets it go; None: none held.
    write_held: dict[str, Any] | None = None
    # The service's answer to this incarnation's last held write once it went (its
    # `write_answered` line) and when it came (time.monotonic()); None: none yet.
    late_write: tuple[dict[str, Any], float] | None = None
    generation: int = 0
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _err_from: int = 0  # where this incarnation's standard error begins in its log
    _ready: bool = False  # this incarnation said what it believes

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self, extra_env: dict[str, str] | None = None) -> None:
        """Start a new incarnation under this id (a restart when one ran before), with
        `extra_env` added to its environment.

        Call it from a thread that lives as long as the supervisor: the parent-death signal
        fires when the thread that started the child ends, not only the process.
        """
        env = self.env
        if extra_env:
            env = {**(self.env if self.env is not None else os.environ), **extra_env}
        err = (self.log_dir / f"{self.worker_id}.err").open("ab")
        self._err_from = err.tell()  # this incarnation's words begin here
        try:
            proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        finally:
            err.close()
        with self._lock:
            self.proc = proc
            self.lines = []
            self.dropped = 0
            self._ready = False
            self.belief = Belief()
            self.stalled = self.frozen = False
            self.write_held = None
            self.late_write = None
            self.generation += 1
        threading.Thread(
            target=self._read, args=(proc,), name=f"read-{self.worker_id}", daemon=True
        ).start()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        with (self.log_dir / f"{self.worker_id}.out").open("ab") as log:
            for raw in proc.stdout:
                log.write(raw)
                log.flush()
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(line, dict):
                    continue
                with self._lock:
                    if self.proc is not proc:
                        return  # an incarnation that was replaced: its last words are old
                    self.lines.append(line)
                    if len(self.lines) > MAX_LINES:
                        gone = len(self.lines) - MAX_LINES
                        del self.lines[:gone]
                        self.dropped += gone
                    if line.get("t") == "belief":
                        self.belief = Belief.of(line)
                        self._ready = True
                    elif line.get("line") == "write_answered":
                        self.late_write = (line, time.monotonic())
                    self._lock.notify_all()
                if self.on_line is not None:
                    self.on_line(self, line)
        with self._lock:
            self._lock.notify_all()
        if self.on_line is not None:  # the pipe closed: the process is gone
            self.on_line(self, {"t": "gone"})

    def said(self) -> list[dict[str, Any]]:
        """The lines kept of this incarnation (its last MAX_LINES)."""
        with self._lock:
            return list(self.lines)

    @property
    def said_count(self) -> int:
        """How many lines this incarnation said, those no longer kept included."""
        with self._lock:
            return self.dropped + len(self.lines)

    def said_since(self, n: int) -> tuple[int, list[dict[str, Any]]]:
        """Which incarnation this is, and its lines from the `n`th on (counted from its
        first; those no longer kept are not returned)."""
        with self._lock:
            return self.generation, self.lines[max(0, n - self.dropped) :]

    @property
    def ready(self) -> bool:
        """Whether this incarnation has opened its store and said what it believes."""
        with self._lock:
            return self._ready

    def last_words(self) -> str | None:
        """The last line this incarnation wrote on its standard error (a warning that its
        clock is not the machine's, the one line it stopped with), or None."""
        try:
            with (self.log_dir / f"{self.worker_id}.err").open("rb") as err:
                err.seek(self._err_from)
                tail = err.read()[-4096:]
        except OSError:
            return None
        lines = [line for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def exit_status(self) -> int | None:
        """The exit status of a process that ended (a signal as its negative number)."""
        return None if self.proc is None else self.proc.poll()

    def _signal(self, sig: signal.Signals) -> bool:
        if not self.alive:
            return False
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        return True

    def kill(self) -> bool:
        """SIGKILL: no goodbye, no last write; its lease simply expires."""
        killed = self._signal(signal.SIGKILL)
        if killed and self.proc is not None:
            self.proc.wait()
        self.stalled = False
        self.write_held = None  # gone with its memory
        self.late_write = None
        return killed

    def stall(self) -> bool:
        """SIGSTOP: the whole process stops, heartbeat and work alike (a long GC pause)."""
        done = self._signal(signal.SIGSTOP)
        self.stalled = self.stalled or done
        return done

    def resume(self) -> bool:
        done = self._signal(signal.SIGCONT)
        self.stalled = False
        return done

    def _tell(self, word: str) -> bool:
        if not self.alive or self.proc is None or self.proc.stdin is None:
            return False
        try:
            self.proc.stdin.write(f"{word}\n".encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            return False
        return True

    def freeze(self) -> bool:
        """Its heartbeat stops; its work goes on (a message on its control channel). The
        heartbeat can stop alone because it runs apart from the work, as the seed asks:
        "更稳妥的方式是单独的 heartbeat 协程或线程"."""
        done = self._tell("freeze")
        self.frozen = self.frozen or done
        return done

    def thaw(self) -> bool:
        done = self._tell("thaw")
        self.frozen = self.frozen and not done
        return done

    def hold_writes(self) -> bool:
        """An agent worker keeps its next downstream writes on their way out (it says
        `write_held` for each) until `send_writes`."""
        return self._tell("hold_writes")

    def send_writes(self) -> bool:
        """Every held write goes, with the token it was given when it was made, and the
        next ones straight through."""
        done = self._tell("write")
        self.write_held = None
        return done

    def wake(self) -> None:
        """Wake whoever waits for a line (`wait_for`), to look at its `give_up` again."""
        with self._lock:
            self._lock.notify_all()

    def ask_to_stop(self) -> None:
        """SIGCONT (should it be stalled) and `stop` on its control channel, which closes."""
        if self.proc is None or not self.alive:
            return
        self.resume()
        self._tell("stop")
        with contextlib.suppress(OSError, ValueError):
            stdin: IO[bytes] | None = self.proc.stdin
            if stdin is not None:
                stdin.close()

    def stop(self, wait_s: float = 10.0) -> int | None:
        """Ask it to stop, wait for it, and SIGKILL it if it will not."""
        if self.proc is None:
            return None
        if self.alive:
            self.ask_to_stop()
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.poll()

    def wait_for(
        self,
        what: Callable[[dict[str, Any]], bool],
        timeout: float,
        since: int = 0,
        give_up: Callable[[], bool] | None = None,
    ) -> dict[str, Any] | None:
        """The first line (from the `since`th of this incarnation on) that `what` accepts,
        waiting up to `timeout` seconds; None if none came, or once `give_up` says so
        (looked at on each line and each `wake`)."""
        end = time.monotonic() + timeout
        seen = since
        with self._lock:
            while True:
                if give_up is not None and give_up():
                    return None
                for line in self.lines[max(0, seen - self.dropped) :]:
                    if what(line):
                        return line
                seen = self.dropped + len(self.lines)
                left = end - time.monotonic()
                if left <= 0:
                    return None
                # woken by each line and by the end of the pipe; the bound only ends a hang
                self._lock.wait(min(left, 1.0))
