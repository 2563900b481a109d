"""The fleet adds a worker with `W` (beside `w`, which chooses one), not with `n`, the
simulated app's next step: `n` pressed by habit says the fleet has no steps and which key
adds a worker. The key bar, the help and the palette name the same key."""

from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding

from core.engine.config import LeaseConfig
from demo.controls import CONTROLS
from demo.i18n import tr
from demo.screens.fleet import ADD_KEY, FleetHelp, FleetScreen
from tests.app.apps import FleetHost


def _keys(binding: Any) -> set[str]:
    return set(binding.key.split(",")) if isinstance(binding, Binding) else set()


def test_one_more_worker_is_not_a_key_of_the_simulated_app() -> None:
    assert ADD_KEY == "W"
    adds = [b for b in FleetScreen.BINDINGS if isinstance(b, Binding) and b.action == "add_worker"]
    assert [_keys(b) for b in adds] == [{ADD_KEY}]
    simulated = {k for c in CONTROLS for k in c.keys.split(",") if k}
    assert ADD_KEY not in simulated, "the simulated app's keys keep their meaning"
    assert "n" in simulated  # next step there


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_n_says_the_fleet_has_no_steps_and_the_key_bar_names_w(lang: str) -> None:
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    said: list[str] = []
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        screen.notify = lambda text, **_: said.append(str(text))  # type: ignore[method-assign]
        await pilot.press("n")
        await pilot.pause()
        hints = {h.key for h in screen.key_hints()}
        screen.app.push_screen(FleetHelp(lang, False))
        await pilot.pause()
        help_text = " ".join(str(s.render()) for s in screen.app.screen.query("Static"))
    assert said and ADD_KEY in said[0], said
    assert ADD_KEY in hints and "n" not in hints
    assert f"{ADD_KEY} " in help_text
    # the one-clock note a short screen leaves out from under its header
    assert tr("fleet_note_sqlite", lang)[:20] in help_text
