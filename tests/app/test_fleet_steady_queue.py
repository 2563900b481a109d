"""The fleet's steady queue: `+` / `-` (or the palette) change how fast new tasks arrive and
say the new rate in a toast; the screen's feed enqueues on the fleet at that rate once its
arrivals are due, paced by the screen's clock (driven here, never waited for)."""

from pathlib import Path
from typing import cast

import pytest

from core.engine.config import LeaseConfig
from core.fleet.arrivals import Arrivals
from core.fleet.supervisor import Fleet
from demo.i18n import tr
from demo.screens.fleet import FleetCommands, FleetScreen
from tests.app.apps import FleetHost

START_RATE = 60.0  # tasks a minute: one a second
MOST_WAITING = 2


class _QueueFleet:
    """A fleet whose workers take every task at once (none waits), no processes: it counts
    the tasks enqueued on it. Its `feed` is the real fleet's, so the rate is judged there."""

    relays = None

    def __init__(self) -> None:
        self.workers: dict[str, object] = {}
        self.enqueued: list[int] = []

    def partitioned(self, worker_id: str) -> bool:
        return False

    def waiting(self) -> int:
        return 0

    def enqueue(self, n: int) -> list[str]:
        self.enqueued.append(n)
        return [f"t{i}" for i in range(n)]

    def feed(self, arrivals: Arrivals, now: float) -> list[str]:
        return Fleet.feed(cast(Fleet, self), arrivals, now)


def _screen(lang: str, arrivals: Arrivals | None) -> tuple[FleetScreen, _QueueFleet]:
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    fleet = _QueueFleet()
    # as a live screen holds them, without its timers: the test calls `feed` itself
    screen.fleet = cast(Fleet, fleet)
    screen.arrivals = arrivals
    return screen, fleet


async def _feed_at(screen: FleetScreen, now: float) -> None:
    screen.clock = lambda: now
    screen.feed()
    await screen.app.workers.wait_for_complete()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_plus_and_minus_change_the_rate_the_feed_enqueues_at(lang: str) -> None:
    arrivals = Arrivals(START_RATE, most_waiting=MOST_WAITING)
    screen, fleet = _screen(lang, arrivals)
    said: list[str] = []
    rates: list[float] = []
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.notify = lambda text, **_: said.append(str(text))  # type: ignore[method-assign,assignment,misc]
        for key in ("plus", "minus", "minus"):
            await pilot.press(key)
            await pilot.pause()
            assert screen.arrivals is not None
            rates.append(screen.arrivals.per_minute)
        # 40 a minute now: a task every 1.5 s, not the second it started at
        got: dict[float, int] = {}
        for now in (100.0, 101.0, 101.4, 101.5, 102.9, 103.0):
            before = sum(fleet.enqueued)
            await _feed_at(screen, now)
            got[now] = sum(fleet.enqueued) - before
    assert rates == [90.0, 60.0, 40.0]
    assert said == [tr("fleet_rate_now", lang, rate=f"{r:g}") for r in (90, 60, 40)]
    assert got == {100.0: MOST_WAITING, 101.0: 0, 101.4: 0, 101.5: 1, 102.9: 0, 103.0: 1}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_palettes_rate_entries_change_the_rate(lang: str) -> None:
    arrivals = Arrivals(START_RATE, most_waiting=MOST_WAITING)
    screen, _fleet = _screen(lang, arrivals)
    said: list[str] = []
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.notify = lambda text, **_: said.append(str(text))  # type: ignore[method-assign,assignment,misc]
        entries = {title: run for title, _help, run in FleetCommands(screen)._commands()}
        faster = f"{tr('fleet_palette_faster', lang)}  [+]"
        slower = f"{tr('fleet_palette_slower', lang)}  [-]"
        entries[faster]()
        await pilot.pause()
        up = arrivals.per_minute
        entries[slower]()
        entries[slower]()
        await pilot.pause()
    assert (up, arrivals.per_minute) == (90.0, 40.0)
    assert said == [tr("fleet_rate_now", lang, rate=f"{r:g}") for r in (90, 60, 40)]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_fixed_batch_has_no_rate_to_change_and_is_not_fed(lang: str) -> None:
    screen, fleet = _screen(lang, None)
    said: list[str] = []
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.notify = lambda text, **_: said.append(str(text))  # type: ignore[method-assign,assignment,misc]
        await pilot.press("plus")
        await pilot.pause()
        await _feed_at(screen, 100.0)
    assert said == [tr("fleet_fixed_batch", lang)]
    assert fleet.enqueued == []
