"""The app on PostgreSQL (`borrowed-keys tui --db postgresql://...`): the same run as on SQLite."""

import threading
from pathlib import Path

import psycopg
import pytest

from core.scenarios.format import load_scenario
from core.scenarios.player import event_record, play
from demo.app import BorrowedKeysApp
from demo.screens.main import MainScreen

FOG = Path(__file__).resolve().parents[2] / "scenarios" / "01_fog.toml"


def fog_app(url: str, save_dir: Path) -> BorrowedKeysApp:
    """01 in the app, on its own clock's steps, keeping its run on PostgreSQL at `url`."""
    return BorrowedKeysApp(
        load_scenario(FOG),
        open_directly=True,
        lang="en",
        live_clock=False,
        save_dir=save_dir,
        database=url,
    )


@pytest.fixture
def on_postgresql(postgres_url: str) -> str:
    return postgres_url


async def test_a_scenario_in_the_app_on_postgresql_equals_the_player_on_sqlite(
    on_postgresql: str, tmp_path: Path
) -> None:
    app = fog_app(on_postgresql, tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        schema = str(screen.session.sim.store.driver.session.target.schema)  # type: ignore[attr-defined]
        assert "bk_run_" in schema
        assert screen.runner.off_loop  # the session works on a thread, not on the loop
        while not screen.session.at_end:
            # n steps; at a question only v reveals (and plays) the step
            await pilot.press("v" if screen.session.question is not None else "n")
            while screen.runner.busy:  # the step's statements, off the loop
                await pilot.pause(0.01)
        mine = [event_record(e) for e in screen.session.events(0)]
        await pilot.press("q")
    # The app ended: its run schema went with it (not only when the process exits).
    with psycopg.connect(on_postgresql) as conn:
        left = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        assert left.fetchone() is None
    on_sqlite = [r for r in play(load_scenario(FOG)) if r["type"] == "event"]
    assert mine == on_sqlite


async def test_on_postgresql_the_screen_never_runs_the_sessions_statements(
    on_postgresql: str, tmp_path: Path
) -> None:
    app = fog_app(on_postgresql, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        loop_thread = threading.current_thread()
        store = screen.session.sim.store
        seen: list[threading.Thread] = []
        read, write = store.driver.read, store.driver.write

        async def watched_read(fn):  # type: ignore[no-untyped-def]
            seen.append(threading.current_thread())
            return await read(fn)

        async def watched_write(fn):  # type: ignore[no-untyped-def]
            seen.append(threading.current_thread())
            return await write(fn)

        store.driver.read, store.driver.write = watched_read, watched_write  # type: ignore[method-assign]
        for key in ("n", "n", "e", "n", "1", "p"):  # steps, an act, time, a panel, an undo
            await pilot.press(key)
            while screen.runner.busy:
                await pilot.pause(0.01)
        assert seen and loop_thread not in seen  # every statement ran off the loop
        assert screen.session.position == 2  # the act undone: back where the fork began
        assert not screen.session.forked and screen.session.acts_count == 0


KEYS = ("n", "n", "e", "n")  # steps, an act (a fork), time: a run worth saving


async def saved_files(
    folder: Path, *, hold: threading.Event | None = None, database: str = ":memory:"
) -> dict[str, bytes]:
    """01_fog on `database`: KEYS, then `s`; the files the save wrote, by extension.

    With `hold`, the save's read of the transcript waits for it, and while it waits the
    loop must go on: a key is handled and nothing is saved yet."""
    loop_thread = threading.current_thread()
    read_on: list[threading.Thread] = []
    app = BorrowedKeysApp(
        load_scenario(FOG),
        open_directly=True,
        lang="en",
        live_clock=False,
        save_dir=folder,
        database=database,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        for key in KEYS:
            await pilot.press(key)
            while screen.runner.busy:
                await pilot.pause(0.01)
        session = screen.session
        real = session.transcript_jsonl

        def held_read() -> str:
            read_on.append(threading.current_thread())
            if hold is not None and threading.current_thread() is not loop_thread:
                hold.wait(timeout=30)  # on the loop it would hold the test itself up
            return real()

        session.transcript_jsonl = held_read  # type: ignore[method-assign]
        await pilot.press("s")
        if hold is not None:
            for _ in range(3000):  # until the save's job reaches the store (30 s at most)
                if read_on:
                    break
                await pilot.pause(0.01)
            assert loop_thread not in read_on, "the transcript was read on the loop"
            speed = screen.pacer.speed
            await pilot.press("plus")  # the loop handles a key meanwhile
            assert screen.pacer.speed > speed
            assert not folder.exists() or not any(folder.iterdir())  # nothing written yet
            assert not any(str(n.message).startswith("Saved") for n in app._notifications)
            hold.set()
        while screen.runner.busy:
            await pilot.pause(0.01)
        await pilot.pause()
        toasts = [str(n.message) for n in app._notifications]
        assert toasts and toasts[-1].startswith("Saved in"), toasts  # TranscriptSaved's toast
        assert read_on
    return {p.suffix: p.read_bytes() for p in folder.iterdir()}


async def test_on_postgresql_saving_reads_the_transcript_off_the_loop(
    on_postgresql: str, tmp_path: Path
) -> None:
    on_pg = await saved_files(tmp_path / "pg", hold=threading.Event(), database=on_postgresql)
    inline = await saved_files(tmp_path / "sqlite")
    # What a save on SQLite writes, inline (the screenshot aside: the key pressed meanwhile
    # changed its speed).
    assert sorted(on_pg) == [".jsonl", ".svg", ".toml"]
    assert on_pg[".jsonl"] == inline[".jsonl"]
    assert on_pg[".toml"] == inline[".toml"]
