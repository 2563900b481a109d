"""The app writes a ledger's pages in the language it shows."""

from pathlib import Path

from core.scenarios.format import load_scenario
from tests.scenarios.test_ledger_value_zh import path


async def test_the_app_writes_the_pages_in_the_language_it_shows(tmp_path: Path) -> None:
    from demo.app import BorrowedKeysApp
    from demo.screens.main import MainScreen

    app = BorrowedKeysApp(
        load_scenario(path("01_fog")),
        open_directly=True,
        lang="zh",
        live_clock=False,
        save_dir=tmp_path,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "n", "n")  # the claim, the fog, page 1
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        pages = {p.key: p.value for p in screen.session.snapshot().ledger}
        assert pages["floor6/1"] == "第 1 页：北岸 120 石（累计 120）"
        await pilot.press("l")  # English from here on
        await pilot.pause()
        assert screen.session.lang == "en"
