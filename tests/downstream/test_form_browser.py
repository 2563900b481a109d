"""The service's form in a real headless Chromium (Debian's, driven by Playwright): a submit
carrying the fence token is a fenced write, and a stale holder's late submit is refused."""

import time
from pathlib import Path

import pytest

from core.agents.browser import CHROMIUM, missing_browser
from core.downstream.service import serve_downstream
from core.engine.clock import VirtualClock
from core.engine.config import LeaseConfig
from core.engine.errors import LeaseRejected
from core.engine.store import LeaseStore

pytestmark = pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))


async def test_a_stale_holder_s_late_submit_is_refused_by_the_service_s_fence(
    tmp_path: Path,
) -> None:
    from playwright.async_api import async_playwright

    clock = VirtualClock(time.time_ns() // 1_000_000)
    async with (
        serve_downstream(tmp_path / "books.db") as service,
        await LeaseStore.open_async(
            tmp_path / "keys.db", clock=clock, config=LeaseConfig(ttl_ms=60_000)
        ) as store,
        async_playwright() as pw,
    ):
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:

            async def submit(token: int, writer: str) -> str:
                page = await browser.new_page()
                await page.goto(f"{service.url}/pages/form")
                for field, value in (("task", "b1"), ("writer", writer), ("token", str(token))):
                    await page.fill(f"#{field}", value)
                await page.fill("#note", f"walked by {writer}")
                await page.click("#submit")
                await page.wait_for_load_state()
                verdict = await page.text_content("#verdict")
                await page.close()
                return str(verdict)

            await store.enqueue("b1", kind="browser")
            with pytest.raises(LeaseRejected):
                async with store.hold("b1", "w1") as stale:
                    clock.advance(60_001)  # w1's walk took longer than its lease
                    async with store.hold("b1", "w2") as fresh:
                        assert await submit(fresh.token, "w2") == "accepted"
                    assert await submit(stale.token, "w1") == "refused"
        finally:
            await browser.close()
        assert await service.books.artifact("b1/form") == {
            "key": "b1/form",
            "value": "walked by w2",
            "token": 2,
            "writer": "w2",
        }
        assert [h["verdict"] for h in await service.books.history()] == ["accepted", "stale_token"]
