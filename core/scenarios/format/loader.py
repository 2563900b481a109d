"""Reading a scenario: the entry points, and the checks that need the whole file."""

import errno
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from core.engine.config import LeaseConfig, Mode
from core.engine.errors import ConfigError
from core.scenarios.format.explain import expect_line, first_problem
from core.scenarios.format.model import (
    MAX_FILE_BYTES,
    MAX_TASKS,
    MAX_TOTAL_STEPS,
    MAX_WAKEUPS,
    MAX_WORKERS,
    Expectation,
    Panel,
    Scenario,
    ScenarioError,
    Step,
    Subject,
    TimingNote,
    said,
    suggest,
    suggest_word,
)
from core.scenarios.format.schema import (
    EXPECT_NAMES,
    ScenarioFile,
    StepTable,
    TaskTable,
    WorkerTable,
)
from core.scenarios.format.source import Lines, decode, parse_toml
from core.scenarios.glossary import config_mistake, file_mistake
from core.sim.spec import (
    MANUAL_ACTIONS,
    Action,
    AddWorker,
    Advance,
    Autopilot,
    Enqueue,
    SimSettings,
)

# -- entry points ----------------------------------------------------------------------------


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario file; ScenarioError (one line) for anything wrong with it."""
    return parse_scenario(read_scenario_file(path), str(path))


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_scenario_file(path: str | Path) -> bytes:
    """The bytes of a scenario file: only a regular file, and never more than the limit.

    A path may name anything: a FIFO (reading it waits for a writer that may never come),
    `/dev/zero` or `/dev/urandom` (no end, and `st_size` says 0), a file still growing. So
    the file is opened without waiting, judged by what is open (not by the name, which may
    change in between), and read at most one byte past the limit, whatever its size says.
    """
    name = str(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if os.path.islink(path):
            raise ScenarioError(
                name,
                None,
                f"cannot read: a symbolic link to {os.readlink(path)!a}, which does not exist",
            ) from None
        raise ScenarioError(name, None, *said("no_such_file")) from None
    except IsADirectoryError:
        raise ScenarioError(name, None, *said("a_directory")) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ScenarioError(
                name, None, "cannot read: symbolic links that lead round in a loop"
            ) from None
        raise ScenarioError(name, None, *said("cannot_read", why=exc.strerror or exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ScenarioError(name, None, *said("a_directory"))
        for test, what in _NOT_REGULAR:
            if test(mode):
                raise ScenarioError(name, None, f"cannot read: it is {what}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ScenarioError(
                name, None, "cannot read: symbolic links that lead round in a loop"
            ) from None
        raise ScenarioError(name, None, *said("cannot_read", why=exc.strerror or exc)) from None
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise ScenarioError(
            name,
            None,
            f"file too large (more than {MAX_FILE_BYTES} bytes; a scenario is at most 1 MB)",
        )
    return b"".join(chunks)


def parse_scenario(text: str | bytes, path: str) -> Scenario:
    """Parse scenario text (bytes must be UTF-8); ScenarioError for anything wrong with it."""
    source = decode(text, path)
    doc = parse_toml(source, path)
    return _build(path, source, doc)


# -- after the models: what needs the whole file ----------------------------------------------


def _build(path: str, source: str, doc: dict[str, Any]) -> Scenario:
    lines = Lines(source)

    def fail(line: int, message: str, zh: str | None = None) -> ScenarioError:
        return ScenarioError(path, line, message, zh)

    try:
        model = ScenarioFile.model_validate(doc)
    except ValidationError as exc:
        line, message, zh = first_problem(exc, lines)
        raise fail(line, message, zh) from None
    except RecursionError:
        raise fail(1, *said("too_deep")) from None

    warnings: list[str] = []
    notes: list[TimingNote] = []
    config = _lease_config(model, doc, lines, fail, warnings, path, notes)
    _unique(model.workers, "workers", "worker", lines, fail)
    _unique(model.tasks, "tasks", "task", lines, fail)
    tasks = tuple(t.spec() for t in model.tasks)
    total = 0
    for i, task in enumerate(tasks):
        total += task.steps
        if total > MAX_TOTAL_STEPS:
            raise fail(
                lines.entry_key("tasks", i, "steps"), *said("too_much_work", high=MAX_TOTAL_STEPS)
            )
    settings = SimSettings(
        mode=Mode(model.mode),
        seed=model.seed,
        config=config,
        self_fencing=model.self_fencing,
        workers=tuple(w.spec() for w in model.workers),
        tasks=tasks,
    )
    state = _State(settings)
    steps = tuple(_step(i, entry, state, lines, fail) for i, entry in enumerate(model.step))
    return Scenario(
        path=path,
        title=model.title,
        title_zh=model.title_zh,
        summary=model.summary,
        summary_zh=model.summary_zh,
        settings=settings,
        steps=steps,
        warnings=tuple(warnings),
        timing_notes=tuple(notes),
    )


class Fail(Protocol):
    """A mistake on a line, in English and (where written) in Chinese."""

    def __call__(self, line: int, message: str, zh: str | None = None, /) -> ScenarioError: ...


def _unique(
    entries: Sequence[WorkerTable | TaskTable], array: str, what: str, lines: Lines, fail: Fail
) -> None:
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.id in seen:
            raise fail(
                lines.entry_key(array, i, "id"),
                f'duplicate {what} id "{entry.id}"',
                file_mistake("duplicate_id", "zh", what=file_mistake(what, "zh"), id=entry.id),
            )
        seen.add(entry.id)


def _lease_config(
    model: ScenarioFile,
    doc: dict[str, Any],
    lines: Lines,
    fail: Fail,
    warnings: list[str],
    path: str,
    notes: list[TimingNote],
) -> LeaseConfig:
    """The file's lease timing, checked by the config's own rules; a broken rule is told on
    the line of the first key it names that the file gives."""
    given = {
        "ttl_ms": model.lease_ttl,
        "heartbeat_every_ms": model.heartbeat_every,
        "renew_deadline_ms": model.renew_deadline,
        "poll_every_ms": model.poll_every,
    }
    config = LeaseConfig(**{k: v for k, v in given.items() if v is not None})

    def line_of(*keys: str) -> int:
        return next((lines.top_key(k) for k in keys if k in doc), 1)

    try:
        config.in_mode(Mode(model.mode))
    except ConfigError as err:
        raise fail(line_of(*err.keys), str(err), config_mistake(err, "zh")) from None
    if config.renews_too_slowly:
        line = line_of("heartbeat_every", "lease_ttl")
        notes.append(TimingNote(line, config.heartbeat_ms, config.ttl_ms))
        warnings.extend(f"{path}:{line}: warning: {m}" for m in config.timing_warnings())
    return config


def _step(index: int, entry: StepTable, state: "_State", lines: Lines, fail: Fail) -> Step:
    def where(key: str | None = None) -> int:
        return lines.entry_key("step", index, key)

    action = None
    action_line = None
    if entry.action is not None:
        action_line = where("do")
        action = entry.action.to_action()
        state.take(action, where, action_line, fail)
    expects = tuple(
        table.to_expectation(expect_line(lines, index, n))
        for n, table in enumerate(entry.expect or ())
    )
    for exp in expects:
        state.check(exp, fail)
    return Step(
        say=entry.say,
        say_zh=entry.say_zh,
        action=action,
        expects=expects,
        question=entry.question(),
        panel=None if entry.panel is None else Panel(entry.panel),
        line=where(),
        action_line=action_line,
    )


class _State:
    """Workers and tasks known so far while reading the steps, and a work estimate."""

    def __init__(self, settings: SimSettings) -> None:
        self.workers: dict[str, bool] = {w.id: w.autopilot for w in settings.workers}
        self.tasks: set[str] = {t.id for t in settings.tasks}
        self.total_task_steps = sum(t.steps for t in settings.tasks)
        config = settings.config
        self.per_worker = 1 / config.poll_every_ms + 1 / config.heartbeat_ms
        self.wakeups = 0.0

    def wakeups_per_ms(self) -> float:
        return self.per_worker * max(1, len(self.workers))

    def take(self, action: Action, where: Callable[[str], int], line: int, fail: Fail) -> None:
        """Check an action against what exists so far, then count what it adds."""
        worker = getattr(action, "worker", None)
        task = getattr(action, "task", None)
        match action:
            case AddWorker():
                if action.worker in self.workers:
                    raise fail(
                        where("worker"),
                        f'duplicate worker id "{action.worker}"',
                        file_mistake(
                            "duplicate_id",
                            "zh",
                            what=file_mistake("worker", "zh"),
                            id=action.worker,
                        ),
                    )
                if len(self.workers) >= MAX_WORKERS:
                    raise fail(
                        where("worker"),
                        f"too many workers (at most {MAX_WORKERS})",
                        file_mistake(
                            "too_many_of",
                            "zh",
                            what=file_mistake("workers", "zh"),
                            high=MAX_WORKERS,
                        ),
                    )
                self.workers[action.worker] = action.autopilot
                return
            case Enqueue():
                if action.task in self.tasks:
                    raise fail(
                        where("task"),
                        f'duplicate task id "{action.task}"',
                        file_mistake(
                            "duplicate_id", "zh", what=file_mistake("task", "zh"), id=action.task
                        ),
                    )
                if len(self.tasks) >= MAX_TASKS:
                    raise fail(
                        where("task"),
                        f"too many tasks (at most {MAX_TASKS})",
                        file_mistake(
                            "too_many_of", "zh", what=file_mistake("tasks", "zh"), high=MAX_TASKS
                        ),
                    )
                self.tasks.add(action.task)
                self.total_task_steps += action.steps
                if self.total_task_steps > MAX_TOTAL_STEPS:
                    raise fail(line, *said("too_much_work", high=MAX_TOTAL_STEPS))
                return
            case Advance():
                self.wakeups += self.wakeups_per_ms() * action.by_ms
                if self.wakeups > MAX_WAKEUPS:
                    raise fail(
                        where("by"),
                        *said("too_long_to_simulate", wakeups=int(self.wakeups), high=MAX_WAKEUPS),
                    )
                return
        if worker is not None:
            self.need_worker(worker, where("worker"), fail)
            if isinstance(action, Autopilot):
                self.workers[worker] = True  # it goes on by itself: no manual acts after
                return
            if isinstance(action, MANUAL_ACTIONS) and self.workers[worker]:
                raise fail(
                    where("worker"), *said("manual_on_autopilot", action=action.name, worker=worker)
                )
        if task is not None:
            self.need_task(task, where("task"), fail)

    def check(self, exp: Expectation, fail: Fail) -> None:
        """An expectation may name only workers and tasks that exist by its step."""
        names = EXPECT_NAMES[exp.subject]
        for key, value in exp.items():
            if not isinstance(value, str) or not value or key not in names:
                continue
            if names[key] is Subject.WORKER:
                self.need_worker(value, exp.line, fail)
            else:
                self.need_task(value, exp.line, fail)

    def need_worker(self, wid: str, line: int, fail: Fail) -> None:
        if wid not in self.workers:
            known = sorted(self.workers)
            raise fail(
                line,
                f'unknown worker "{wid}"{suggest(wid, known)}'
                + ("" if known else " (there are no workers yet)"),
                file_mistake("unknown_worker", "zh", id=wid, hint=suggest_word(wid, known, "zh"))
                + ("" if known else file_mistake("none_yet_workers", "zh")),
            )

    def need_task(self, tid: str, line: int, fail: Fail) -> None:
        if tid not in self.tasks:
            known = sorted(self.tasks)
            raise fail(
                line,
                f'unknown task "{tid}"{suggest(tid, known)}'
                + ("" if known else " (there are no tasks yet)"),
                file_mistake("unknown_task", "zh", id=tid, hint=suggest_word(tid, known, "zh"))
                + ("" if known else file_mistake("none_yet_tasks", "zh")),
            )
