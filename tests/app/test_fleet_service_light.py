"""The fleet screen's safety light over the downstream service's own books: a stale write
the service took, or a second charge, turns it red and is said in the service's words (the
store's ledger rules say nothing of it), in English and Chinese."""

import dataclasses
from pathlib import Path

import pytest

from core.downstream.books import ServiceRule
from core.engine.config import LeaseConfig
from demo.screens.fleet import FleetScreen
from demo.widgets.status_header import HeaderState, StatusHeader, header_fields
from tests.app.apps import FleetHost
from tests.app.test_fleet_names import _frame

BROKEN = ((ServiceRule.NO_CHARGE_TWICE.value, 2), (ServiceRule.NO_STALE_WRITE.value, 1))
SAID = {
    "en": "the service's books: stale write taken × 1, charged twice for one thing × 2",
    "zh": "下游服务的账本：接受了过期写入 × 1，同一件事扣了两次款 × 2",
}
SAFE = {"en": "safe", "zh": "安全"}


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_light_turns_red_over_what_the_service_took(lang: str) -> None:
    screen = FleetScreen(None, lang, Path("."), live=False, config=LeaseConfig(ttl_ms=3000))
    async with FleetHost(screen).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        header = screen.query_one("#status", StatusHeader)
        screen.show_frame(_frame())
        await pilot.pause()
        assert SAFE[lang] in str(header.render()) and not header.has_class("-unsafe")
        screen.show_frame(dataclasses.replace(_frame(), service=BROKEN))
        await pilot.pause()
        shown = str(header.render())
        assert SAID[lang] in shown, shown
        assert header.has_class("-unsafe")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_store_and_the_service_are_said_side_by_side(lang: str) -> None:
    state = HeaderState(
        "fleet", 0, 1.0, "no_fencing", True, False, False, False,
        (("stale_write_accepted", 1),), lang, service=BROKEN[1:],
    )  # fmt: skip
    light = header_fields(state)[-1].plain
    store = {"en": "stale write accepted × 1", "zh": "过期写入被接受 × 1"}[lang]
    service = {
        "en": "the service's books: stale write taken × 1",
        "zh": "下游服务的账本：接受了过期写入 × 1",
    }
    assert light.strip().startswith("●") and store in light and service[lang] in light
    # a rule counted none times is no harm: the light stays green
    quiet = dataclasses.replace(state, violations=(), service=((BROKEN[0][0], 0),))
    assert SAFE[lang] in header_fields(quiet)[-1].plain and not quiet.unsafe
