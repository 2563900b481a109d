"""用法一：Browser Agent. A walk through the service's local pages in a real headless
Chromium (Playwright, driving Debian's chromium; never a downloaded browser).

"Lease + checkpoint 可以把状态拆成：已打开到哪个 URL；已完成哪些操作；当前截图或 DOM 摘要在哪；
下一步计划是什么。" The checkpoint after each action holds exactly those four, and a successor
opens the URL it names and goes on with the next action, not from the first page.
"""

import asyncio
import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from core.agents.work import Job, Say
from core.downstream.client import DownstreamClient, DownstreamRefused
from core.engine.hold import Hold

CHROMIUM = Path(os.environ.get("BK_CHROMIUM", "/usr/bin/chromium"))

# Browsers this process has launched, whatever launched them: a worker's walks should
# share one, and say so.
_LAUNCHED = [0]

# The walk: the list's three pages, the slow page, the form, its submit.
PLAN = ("open_list", "next", "next", "next", "to_form", "submit")


def missing_browser() -> str | None:
    """Why a browser walk cannot run here, in one line; None if it can."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "browser work needs the playwright package (pip install playwright)"
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        return (
            f"browser work needs Debian's chromium at {CHROMIUM} (apt-get install chromium);"
            " no browser is ever downloaded"
        )
    return None


async def _summary(page: Any) -> str:
    title = await page.title()
    heading = await page.text_content("h1") or ""
    return f"{title} | {heading.strip()}"


def launched() -> int:
    """How many browsers this process has launched."""
    return _LAUNCHED[0]


class Chromium:
    """One headless chromium for a worker's life, launched at its first walk and closed
    when the block ends (`async with Chromium() as chromium:`). A walk takes a context of
    its own in it (`new_context`: its own cookies, storage and pages), so walks share the
    process and nothing else; a browser that has gone away is launched again."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self.launches = 0

    async def __aenter__(self) -> "Chromium":
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def context(self) -> Any:
        """A fresh browser context in the one browser (launched if it is not running)."""
        if self._browser is None or not self._browser.is_connected():
            from playwright.async_api import async_playwright

            if self._playwright is None:
                self._playwright = await async_playwright().start()
            executable = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
            self._browser = await self._playwright.chromium.launch(
                executable_path=executable, headless=True
            )
            self.launches += 1
            _LAUNCHED[0] += 1
        return await self._browser.new_context()

    async def close(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        try:
            if browser is not None:
                with contextlib.suppress(Exception):  # a browser already gone is closed
                    await browser.close()
        finally:
            if playwright is not None:
                await playwright.stop()


async def _submit(
    page: Any, client: DownstreamClient, token: int, job: Job, say: Say
) -> tuple[str | None, str]:
    """Fill the form with the fence token and send it; the verdict and the page's text. A
    submit the client held (a stall) says the service's answer once it has it."""
    key = f"{job.task_id}/form"
    held = await client.before_write(key, token)
    await page.fill("#task", job.task_id)
    await page.fill("#writer", job.worker_id)
    await page.fill("#token", str(token))  # the fence, in the form
    await page.fill("#note", f"walked by {job.worker_id}")
    await page.click("#submit")
    await page.wait_for_load_state()
    verdict = await page.text_content("#verdict")
    body = await page.text_content("body") or ""
    if held:
        error = await page.get_attribute("#verdict", "data-error") or None
        newest = await page.get_attribute("#verdict", "data-newest") or ""
        say(
            "write_answered",
            key=key,
            token=token,
            status=200 if verdict == "accepted" else 409,
            error=error,
            message=body.strip(),
            newest=int(newest) if newest.isdigit() else None,
        )
    return verdict, body


async def browse(
    lease: Hold, client: DownstreamClient, job: Job, say: Say, chromium: Chromium | None = None
) -> None:
    """One walk, in `chromium` (the worker's one browser), or in a browser of its own
    launched and closed for this walk alone when none is given."""
    if chromium is None:
        async with Chromium() as own:
            await browse(lease, client, job, say, own)
        return
    state = lease.resume() or {"url": None, "actions": [], "dom": None, "next": PLAN[0]}
    done: list[str] = list(state["actions"])
    say("resumed", task=job.task_id, url=state["url"], actions=len(done), token=lease.token)
    context = await chromium.context()
    sending: asyncio.Future[tuple[str | None, str]] | None = None
    try:
        page = await context.new_page()
        if state["url"] is not None:
            await page.goto(state["url"])  # where the last holder had got to
        for index in range(len(done), len(PLAN)):
            action = PLAN[index]
            if action == "open_list":
                await page.goto(f"{job.service_url}/pages/list/1")
            elif action in ("next", "to_form"):
                await page.click("#next")
                await page.wait_for_load_state()
            else:
                # Sent in a task of its own, awaited shielded: a submit held through a stall
                # (`before_write`) is on its way out as far as the walk knows, and the hold's
                # self-fencing cannot recall it, as it cannot recall a request on the wire.
                # Only the service's fence can refuse it.
                sending = asyncio.ensure_future(_submit(page, client, lease.token, job, say))
                verdict, body = await asyncio.shield(sending)
                if verdict != "accepted":
                    raise DownstreamRefused(409, {"message": body.strip()})
            done.append(action)
            step_state = {
                "url": page.url,
                "actions": done,
                "dom": await _summary(page),
                "next": PLAN[index + 1] if index + 1 < len(PLAN) else None,
            }
            await lease.checkpoint(step_state)
            say("step", task=job.task_id, action=action, url=page.url, index=index)
            await page.wait_for_timeout(job.step_s * 1000)
    finally:
        if sending is not None and not sending.done():
            # a cancelled walk lets its submit land before its page is closed under it
            with contextlib.suppress(BaseException):
                await sending
        with contextlib.suppress(Exception):  # the browser may be gone: nothing to close
            await context.close()
    # how many browsers this process has launched so far: one for all its walks
    say("wrote", task=job.task_id, token=lease.token, launches=launched())
