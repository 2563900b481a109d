"""The fleet app on agent work (`borrowed-keys fleet --work tools`, `--work approval`): real
agent worker processes doing the seed's use cases against the fenced downstream service on a
loopback port, the fleet and the service built as the command builds them (`start_fleet`),
driven by the presenter's keys. What the screen says at the end is checked against the
store's rows and the service's own books, read directly.

Real processes on the real clock (marked slow). Every wait is on what the screen, the store
or the process table says, bounded by WAIT_S, which only a hung run reaches.
"""

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.downstream.books import ServiceRule, judge
from core.engine.people import called
from core.engine.vocabulary import EventKind, TaskStatus
from core.fleet.command import FleetArgs, start_fleet
from core.fleet.history import load_history
from core.fleet.supervisor import Fleet
from core.fleet.words import word
from core.scenarios.glossary import kind_word, service_phrase, status_word, task_name
from core.scenarios.telling import spaced, task_words
from core.sim.spec import WorkerState
from demo.controls import Moment, by_id
from demo.fleet_app import FleetApp, quit_verdict
from demo.i18n import state_word, tr
from demo.screens.fleet import FleetScreen, ended
from demo.widgets.keybar import KeyBar
from demo.widgets.status_header import StatusHeader
from demo.widgets.task_table import COLUMNS, TaskTable
from demo.widgets.worker_pane import WorkerGrid
from tests.real.test_fleet_keys import WAIT_S, state_of

pytestmark = pytest.mark.slow

# the task table's cells, where its columns put them
KIND, STATUS, OWNER, FENCE, STEP = (
    COLUMNS.index(c) for c in ("kind", "status", "owner", "fence_token", "checkpoint_step")
)


def _fleet(
    tmp_path: Path,
    work: str,
    *,
    workers: int,
    tasks: int,
    steps: int,
    step_ms: int = 600,
    ttl_ms: int = 1500,
    mode: str = "correct",
) -> Fleet:
    """The fleet `borrowed-keys fleet --work WORK` starts: its SQLite store, the fenced
    service beside it, the workers and a fixed batch of tasks (`--tasks`)."""
    opts = FleetArgs(
        db=None,
        pg=False,
        workers=workers,
        tasks=tasks,
        ttl_ms=ttl_ms,
        steps=steps,
        step_ms=step_ms,
        mode=mode,
        work=work,
    )
    fleet: Fleet = start_fleet(opts, tmp_path)
    for _ in range(workers):
        fleet.add_worker()
    fleet.enqueue(tasks)
    return fleet


async def _until(pilot: Any, what: str, found: Callable[[], bool]) -> None:
    end = time.monotonic() + WAIT_S
    while not found():
        assert time.monotonic() < end, f"{what}: not within {WAIT_S:.0f} s"
        await pilot.pause(0.05)


def _cells(screen: FleetScreen) -> dict[str, tuple[str, ...]]:
    """The task table as it stands on screen: each task's cells, as text."""
    rows = screen.query_one("#tasks", TaskTable)._rows
    return {task: tuple(str(cell) for cell in row) for task, row in rows.items()}


def _status_shown(screen: FleetScreen, task: str = "t1") -> str | None:
    cells = _cells(screen).get(task)
    return None if cells is None else cells[STATUS]


def _toasts(app: FleetApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _rows(fleet: Fleet) -> dict[str, Any]:
    tasks, _, _ = fleet.rows()
    return {r.task_id: r for r in tasks}


def _busy(screen: FleetScreen, steps: int) -> tuple[str, str] | None:
    """A worker whose pane says it is working a tools task, not at its last step, and the
    task table agrees: that task runs, its owner that worker."""
    lang = screen.lang
    working = state_word(WorkerState.WORKING, lang)
    table = _cells(screen)
    for wid, pane in screen.query_one("#workers", WorkerGrid).panes.items():
        lines = pane.text.plain.splitlines()
        if len(lines) < 2 or not lines[0].startswith(working):
            continue
        for task, cells in table.items():
            if (
                lines[1].startswith(f"{task_name(task, lang)} · ")
                and f"/{steps}" in lines[1]
                and not lines[1].endswith(f"{steps}/{steps}")
                and cells[KIND] == kind_word("tools", lang)
                and cells[STATUS] == status_word(TaskStatus.RUNNING, lang)
                and cells[OWNER] == called(wid, lang)
            ):
                return wid, task
    return None


async def _choose_a_busy_worker(pilot: Any, screen: FleetScreen, steps: int) -> tuple[str, str]:
    """As a presenter would: a worker seen working a tools task, chosen with `w`; the
    worker and its task."""
    await _until(
        pilot, "a worker seen working a tools task", lambda: _busy(screen, steps) is not None
    )
    seen = _busy(screen, steps)
    assert seen is not None
    victim, _task = seen
    assert screen.fleet is not None
    for _ in screen.fleet.workers:
        if screen.chosen == victim:
            break
        await pilot.press("w")
    assert screen.chosen == victim
    return seen


async def _kill_a_busy_worker(pilot: Any, screen: FleetScreen, steps: int) -> tuple[str, str]:
    """As a presenter would: the worker seen working a task chosen with `w`, killed with
    `k`, and restarted with `u`; the worker and the task it held."""
    fleet = screen.fleet
    assert fleet is not None
    lang = screen.lang
    grid = screen.query_one("#workers", WorkerGrid)
    victim, task = await _choose_a_busy_worker(pilot, screen, steps)
    proc = fleet.workers[victim]
    pid = proc.pid or 0
    await pilot.press("k")
    await _until(pilot, f"{victim} gone", lambda: state_of(pid) is None)
    killed = ended(-9, None, lang)
    await _until(
        pilot,
        "the pane says how it ended",
        lambda: killed in str(grid.panes[victim].border_title),
    )
    await pilot.press("u")  # a dead worker: restarted under the same name
    await _until(pilot, f"{victim} back", lambda: proc.alive and proc.pid != pid)
    await _until(
        pilot,
        "the pane names the new process",
        lambda: tr("fleet_pid", lang, pid=proc.pid) in str(grid.panes[victim].border_title),
    )
    return victim, task


async def _service_read_again(pilot: Any, screen: FleetScreen) -> None:
    """A frame that read the service's books as they stand now. They are read at most every
    SERVICE_READ_EVERY_S: the next frame is made to read them again, rather than the test
    waiting that long on the wall clock."""
    assert screen.maker is not None
    screen.maker._service_read_at = None
    shown = screen.frames_shown
    await _until(pilot, "a frame after the last read", lambda: screen.frames_shown > shown)


async def _saved_toast(pilot: Any, app: FleetApp) -> str:
    """`s`, and what the toast said of the saved run."""
    await pilot.press("s")
    said = tr("fleet_saved", app.lang, path="\0", verdict="").split("\0")[0]
    await _until(pilot, "the save said", lambda: any(t.startswith(said) for t in _toasts(app)))
    return next(t for t in _toasts(app) if t.startswith(said))


async def test_tools_work_killed_and_restarted_ends_as_the_screen_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two agent workers on three tools tasks; the one seen working a task is killed with
    `k` and restarted with `u`. Every task ends done, the store's and the service's rules
    hold, and the service charged once for each idempotency key, whatever the kill redid."""
    lang = "en"
    steps = 3
    fleet = _fleet(tmp_path, "tools", workers=2, tasks=3, steps=steps)
    try:
        app = FleetApp(fleet, lang, tmp_path / "saves")
        async with app.run_test(size=(200, 60)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            _victim, task = await _kill_a_busy_worker(pilot, screen, steps)

            done = status_word(TaskStatus.DONE, lang)
            await _until(
                pilot,
                "every task done on screen",
                lambda: (
                    len(_cells(screen)) == 3
                    and all(c[STATUS] == done for c in _cells(screen).values())
                ),
            )
            rows = _rows(fleet)
            assert {t: r.status for t, r in rows.items()} == dict.fromkeys(rows, TaskStatus.DONE)
            # each task's checkpoint is at its last step, as its payload counts them (the
            # panes said "step 3/3"), not at a count of the records its calls also wrote
            assert {t: c[STEP] for t, c in _cells(screen).items()} == dict.fromkeys(
                rows, str(steps)
            )
            # the killed holder's task was finished under a later lease, not by the dead one
            assert rows[task].attempt >= 2, rows[task]

            # the service's books, read directly: one charge per idempotency key, every
            # step of every task charged, and its own rules held
            books = await asyncio.to_thread(fleet.downstream.books)  # its own loop
            keys = [c["idempotency_key"] for c in books["charges"]]
            assert None not in keys and len(keys) == len(set(keys)), keys
            charged = sorted((c["task"], c["memo"]) for c in books["charges"])
            assert charged == sorted((t, f"call-{k}") for t in rows for k in range(1, steps + 1)), (
                charged
            )
            assert judge(books["history"], books["charges"]) == []

            # the light, once it has read the books as they now stand, says safe
            header = screen.query_one("#status", StatusHeader)
            await _service_read_again(pilot, screen)
            assert tr("safe", lang) in str(header.render()) and not header.has_class("-unsafe")

            # `s` saves the run; its toast names the service's books as held, and so does
            # the saved file, checked again as `fleet --check` does
            toast = await _saved_toast(pilot, app)
            assert tr("fleet_verdict_held", lang) in toast, toast
            assert tr("fleet_service_held", lang) in toast, toast
        (path,) = (tmp_path / "saves").glob("fleet-*.jsonl")
        saved = load_history(path)
        assert saved.verdict.get("verdict") == "held"
        assert not saved.check().findings
        assert saved.service is not None
        assert len(saved.service["charges"]) == len(keys)
        assert judge(saved.service["history"], saved.service["charges"]) == []
        # `q`'s verdict names the service's rules over its books, held, and exits 0
        capsys.readouterr()
        assert await asyncio.to_thread(quit_verdict, fleet, lang) == 0
        out = capsys.readouterr().out
        rules = ", ".join(rule.value for rule in ServiceRule)
        assert word("service_rules", lang, rules=rules, n=len(books["history"])) in out, out
        assert out.rstrip().endswith(word("service_held", lang)), out
    finally:
        fleet.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_tools_work_without_idempotency_turns_the_light_red(
    tmp_path: Path, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed's fifth part missing ("Idempotency Key 让重放调用不炸副作用"): the agent
    sends no key, so a kill between a charge and its record makes the redo charge again.
    The store's own rules see nothing (the charge is the service's), and the light turns red
    in the service's words, read from its real books; the save says so too. The worker is
    killed as its pane shows the step just charged: nearly all of a step (its second) is the
    gap between the charge and its record, so whichever step the kill lands in, one call is
    charged twice."""
    steps = 2
    fleet = _fleet(
        tmp_path, "tools", workers=1, tasks=1, steps=steps, step_ms=1000, mode="no_idempotency"
    )
    try:
        app = FleetApp(fleet, lang, tmp_path / "saves")
        async with app.run_test(size=(200, 60)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            await _kill_a_busy_worker(pilot, screen, steps)
            done = status_word(TaskStatus.DONE, lang)
            await _until(
                pilot,
                "the task done on screen",
                lambda: _status_shown(screen) == done,
            )
            books = await asyncio.to_thread(fleet.downstream.books)  # its own loop
            # the redo charged again the call the kill cut off before its record: call-1,
            # or call-2 where the worker had gone on by the time the kill landed (the pane
            # seen working step 1 is a frame behind the process); every other call once
            memos = Counter(c["memo"] for c in books["charges"])
            assert sorted(memos.values()) == [1, 2] and set(memos) == {"call-1", "call-2"}, memos
            found = judge(books["history"], books["charges"])
            counts = Counter(str(f.rule.value) for f in found)
            assert counts == {ServiceRule.NO_CHARGE_TWICE.value: 1}, found

            header = screen.query_one("#status", StatusHeader)
            await _service_read_again(pilot, screen)
            shown = str(header.render())
            assert header.has_class("-unsafe"), shown
            assert f"{tr('fleet_title_one', lang)} │" in shown, shown  # not "1 ... processes"
            served = tr("service_broke", lang, what=service_phrase(counts, lang))
            assert served in shown, shown
            assert not screen.frame or not screen.frame.snap.violations  # the store's held

            toast = await _saved_toast(pilot, app)
            assert tr("fleet_verdict_held", lang) in toast, toast
            assert tr("fleet_service_broken", lang, n=1) in toast, toast
        (path,) = (tmp_path / "saves").glob("fleet-*.jsonl")
        saved = load_history(path)
        assert saved.service is not None
        assert len(judge(saved.service["history"], saved.service["charges"])) == 1
        # `q`'s verdict: the store's rules held, the service's did not, and the exit says so
        capsys.readouterr()
        assert await asyncio.to_thread(quit_verdict, fleet, lang) == 1
        out = capsys.readouterr().out
        assert tr("fleet_verdict_held", lang) in out, out
        assert out.rstrip().endswith(word("service_broken", lang, n=1)), out
    finally:
        fleet.close()


@pytest.mark.parametrize(("lang", "waiting"), [("en", "waiting"), ("zh", "待审批")])
async def test_an_approval_task_waits_for_the_key_and_ends_under_a_fresh_fence(
    tmp_path: Path, lang: str, waiting: str
) -> None:
    """ "Agent 执行到审批节点时保存 checkpoint；租约自然释放；审批信号到来后重新 claim；带着新的
    lease_token 从 checkpoint 继续。" The task parks: the table says it waits for approval
    in the run's language, the approve key answers it, and a worker ends it under a fence
    token greater than the one it parked under."""
    fleet = _fleet(tmp_path, "approval", workers=1, tasks=1, steps=1)
    try:
        app = FleetApp(fleet, lang, tmp_path / "saves")
        async with app.run_test(size=(200, 60)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            await _until(
                pilot,
                "the task parked in the store",
                lambda: (
                    _rows(fleet).get("t1") is not None
                    and _rows(fleet)["t1"].status == TaskStatus.WAITING
                ),
            )
            parked_under = _rows(fleet)["t1"].fence_token
            assert waiting == status_word(TaskStatus.WAITING, lang)  # the word table's
            await _until(
                pilot,
                "the table says it waits",
                lambda: _status_shown(screen) == waiting,
            )
            cells = _cells(screen)["t1"]
            assert cells[KIND] == kind_word("approval", lang)
            assert cells[FENCE] == str(parked_under)
            parks = [ev for ev in fleet.final_events() if ev.event == EventKind.PARKED]
            assert [ev.fence_token for ev in parks] == [parked_under]

            approve = by_id("approve")
            assert approve.moment == Moment.TASK_WAITS  # the key that answers a parked task
            bar = str(screen.query_one("#keybar", KeyBar).render())
            assert f"{approve.first_key} {tr(approve.word, lang)}" in bar
            await pilot.press(approve.first_key)
            # the task by its name, as the table names it ("已批准任务 1", never "t1" in zh)
            approved = spaced(tr("fleet_approved", lang, task=task_words("t1", lang)), lang)
            await _until(pilot, "the approval said", lambda: approved in _toasts(app))
            done = status_word(TaskStatus.DONE, lang)
            await _until(
                pilot,
                "the task done on screen",
                lambda: _status_shown(screen) == done,
            )
            row = _rows(fleet)["t1"]
            assert row.status == TaskStatus.DONE
            assert row.fence_token > parked_under, (row.fence_token, parked_under)
            await _until(
                pilot,
                "the table shows the fresh fence",
                lambda: _cells(screen)["t1"][FENCE] == str(row.fence_token),
            )
        events = fleet.final_events()
        said = [ev.event for ev in events if ev.task_id == "t1"]
        assert said.index(EventKind.APPROVED) > said.index(EventKind.PARKED)
        finished = next(ev for ev in events if ev.event == EventKind.COMPLETED)
        assert finished.fence_token == row.fence_token
        # the service took the draft under the fresh fence token, and nothing else
        books = await asyncio.to_thread(fleet.downstream.books)  # its own loop
        sent = [h for h in books["history"] if h["key"] == "t1/sent"]
        assert [(h["verdict"], h["token"]) for h in sent] == [("accepted", row.fence_token)]
        assert judge(books["history"], books["charges"]) == []
    finally:
        fleet.close()


async def test_z_stops_a_tools_worker_with_its_write_in_hand_and_u_sends_it_late(
    tmp_path: Path,
) -> None:
    """`z` on a worker seen working a tools task: the stall waits for its write on a thread
    of the app's, and its pane then says it was stopped with its write in hand. Once the
    other worker has finished the task (the table says done), `u` sends that write late
    with its old token, and the service refuses it."""
    lang = "en"
    # Two steps of 600 ms in which a presenter can see it working and stop it; the stall
    # waits for its write at most a lease's length, which must outlast the steps still to
    # run before that write (up to all three).
    steps = 3
    fleet = _fleet(tmp_path, "tools", workers=2, tasks=1, steps=steps, ttl_ms=3000)
    try:
        app = FleetApp(fleet, lang, tmp_path / "saves")
        async with app.run_test(size=(200, 60)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)
            grid = screen.query_one("#workers", WorkerGrid)
            victim, task = await _choose_a_busy_worker(pilot, screen, steps)
            proc = fleet.workers[victim]
            await pilot.press("z")
            in_hand = tr("write_in_hand", lang)
            await _until(
                pilot,
                "the pane says its write is in hand",
                lambda: in_hand in grid.panes[victim].text.plain,
            )
            assert proc.stalled and proc.write_held is not None
            token = proc.write_held["token"]
            done = status_word(TaskStatus.DONE, lang)
            await _until(
                pilot, "the task done by the other", lambda: _status_shown(screen, task) == done
            )
            mark = proc.said_count
            await pilot.press("u")
            await _until(
                pilot,
                "its late write answered",
                lambda: (
                    proc.wait_for(lambda line: line.get("line") == "write_answered", 0, mark)
                    is not None
                ),
            )
            await _until(
                pilot,
                "its pane no longer says so",
                lambda: in_hand not in grid.panes[victim].text.plain,
            )
            books = await asyncio.to_thread(fleet.downstream.books)
            writes = [h for h in books["history"] if h["key"] == f"{task}/result"]
            assert [h["verdict"] for h in writes] == ["accepted", "stale_token"], writes
            assert writes[1]["token"] == token < writes[0]["token"]
            # and the pane says what the service answered, where it said it held the write
            refused = tr(
                "late_write_refused",
                lang,
                name=f"{task}/result",
                token=token,
                newest=writes[0]["token"],
            )
            await _until(
                pilot,
                f"the pane says the refusal: {refused}",
                lambda: refused in grid.panes[victim].text.plain,
            )
            assert judge(books["history"], books["charges"]) == []
    finally:
        fleet.close()
