"""The exported page of 01_fog in a real headless Chromium, opened from file:// with every
network request refused and counted.

The browser set-up is test_serve_browser's (Debian's chromium driven by Playwright; skipped,
with the reason, where either is missing). The page is static: the waits are Playwright's
own for the page's state after a key, bounded, never sleeps.
"""

import re
from pathlib import Path
from typing import Any

import pytest

from core.scenarios.library import open_scenario
from demo.export.cli import export
from demo.screens.main import AUTOPLAY_S
from tests.serve.test_serve_browser import CHROMIUM_ARGS, assert_not_blank, find_chromium

FENCE = 14  # the step of 01_fog where Acheng's stale page is refused
STEPS = 15  # the page keeps the steps up to the one after it
TIMEOUT_MS = 10_000
AUTOPLAY_MS = int(AUTOPLAY_S * 1000)  # the app's pace, which the page plays at


@pytest.fixture
def chromium() -> str:
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found (/usr/bin/chromium; `apt-get install chromium`)")
    return path


@pytest.fixture(scope="module")
def fog_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the steps up to the fence are enough, and keep the test short
    out = tmp_path_factory.mktemp("fog-page")
    done = export(open_scenario("01_fog"), out, name="01_fog", steps=STEPS)
    return done.page


def visible_text(page: Any) -> str:
    return str(page.evaluate("document.querySelector('section.step:not([hidden])').innerText"))


def frame_text(page: Any, lang: str) -> str:
    """The text drawn in the frame on screen (the SVG's own text nodes)."""
    return str(
        page.evaluate(
            "(lang) => document.querySelector("
            "`section.step:not([hidden]) [data-l='${lang}'] figure.frame.after svg`).textContent",
            lang,
        )
    ).replace("\xa0", " ")


def test_the_fog_page_walks_to_the_fence_offline(
    chromium: str, fog_page: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    shot = tmp_path / "export-fog-zh.png"
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1600, "height": 1000})
            url = fog_page.as_uri()

            def refuse(route: Any) -> None:
                if route.request.url.split("#")[0] == url:
                    route.continue_()  # the page itself
                else:
                    requests.append(route.request.url)
                    route.abort()

            context.route("**/*", refuse)
            context.on(
                "request",
                lambda r: None if r.url.split("#")[0] == url else requests.append(r.url),
            )
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url, wait_until="load")
            assert "Step 0 of 17" in visible_text(page)
            for _ in range(FENCE):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(
                f"location.hash === '#step-{FENCE}'", timeout=TIMEOUT_MS, polling=50
            )
            # interview mode: the question and its choices, not yet the answer or the frame
            text = visible_text(page)
            assert f"Step {FENCE} of 17" in text
            assert "Will the ledger accept her page?" in text
            assert "No: her fence token is behind the task's newest" in text
            assert "Linzhou's claim drew fence token 2" not in text  # the why waits
            step = f"section[data-step='{FENCE}'] [data-l='en']"
            assert not page.locator(f"{step} figure.frame.after").is_visible()
            page.keyboard.press("ArrowRight")  # as in the app, n by habit does not reveal
            assert "Linzhou's claim drew fence token 2" not in visible_text(page)
            assert page.url.endswith(f"#step-{FENCE}")
            page.keyboard.press("v")
            text = visible_text(page)
            assert "Linzhou's claim drew fence token 2" in text  # the why
            assert "the counting house refuses it (fenced)" in text  # the narration
            assert "✓ Acheng was refused once: fenced" in text
            assert "✓ Page floor6/3: written by Linzhou, fence token 2" in text
            drawn = frame_text(page, "en")
            assert "fenced" in drawn and "1 (now 2)" in drawn
            # the permalink opens the same step
            assert page.url.endswith(f"#step-{FENCE}")
            page.keyboard.press("l")  # the language toggle
            text = visible_text(page)
            assert f"第 {FENCE} 步 / 共 17 步" in text
            assert "总册会收下她这一页吗？" in text
            assert "围栏令牌落后" in frame_text(page, "zh")
            page.screenshot(path=str(shot))
            assert errors == []
        finally:
            browser.close()
    assert requests == []  # nothing but the file itself was asked for
    assert_not_blank(shot)


def test_a_permalink_opens_its_step_with_its_question_first(chromium: str, fog_page: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{fog_page.as_uri()}#step-{FENCE}", wait_until="load")
            assert "Will the ledger accept her page?" in visible_text(page)
            page.click(f"section[data-step='{FENCE}'] [data-l='en'] button.reveal")
            assert "Linzhou's claim drew fence token 2" in visible_text(page)
            page.keyboard.press("ArrowLeft")  # PgUp and ← step back
            page.keyboard.press("PageUp")
            assert page.url.endswith("#step-12")
            assert "lease token 2, fence token 2, until 0:02:25" in visible_text(page)
            # printed (a PDF for an application form): every step on a page of its own
            pdf = page.pdf(landscape=True, format="A4")
            assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == STEPS + 1
        finally:
            browser.close()


def test_space_plays_at_the_apps_pace_on_the_pages_clock(chromium: str, fog_page: Path) -> None:
    """The page's timer runs on Playwright's clock, moved by hand: no test waits 3 s."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.clock.install()
            page.goto(f"{fog_page.as_uri()}#step-12", wait_until="load")
            # from here the page's time moves only when the test moves it
            page.clock.pause_at(int(page.evaluate("Date.now()")) + 1000)
            page.keyboard.press(" ")  # play
            page.clock.run_for(AUTOPLAY_MS - 100)
            assert page.url.endswith("#step-12")  # not before the app's pace
            page.clock.run_for(100)
            assert page.url.endswith("#step-13")
            page.clock.run_for(AUTOPLAY_MS)
            text = visible_text(page)  # the question, and the run stops on it
            assert page.url.endswith("#step-14") and "Will the ledger accept" in text
            page.clock.run_for(3 * AUTOPLAY_MS)
            assert "Linzhou's claim drew fence token 2" not in visible_text(page)
            page.keyboard.press("v")  # revealing it lets the run go on, a full beat later
            assert "Linzhou's claim drew fence token 2" in visible_text(page)
            page.clock.run_for(AUTOPLAY_MS)
            assert page.url.endswith("#step-15")
            page.keyboard.press(" ")  # pause
            page.clock.run_for(3 * AUTOPLAY_MS)
            assert page.url.endswith("#step-15")
        finally:
            browser.close()


def shown_frame(page: Any, lang: str, which: str = "after") -> Any:
    return page.locator(
        f"section.step:not([hidden]) [data-l='{lang}'] figure.frame.{which} svg.rich-terminal"
    )


def test_the_screen_comes_first_and_the_page_opens_at_its_top(
    chromium: str, fog_page: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            for lang in ("en", "zh"):
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                page.goto(f"{fog_page.as_uri()}#step-3", wait_until="load")
                if lang == "zh":
                    page.keyboard.press("l")
                # a permalink opens its step with the page at its top, not scrolled to it
                assert page.evaluate("window.scrollY") == 0
                assert page.url.endswith("#step-3")
                frame = shown_frame(page, lang).bounding_box()
                heading = page.locator(
                    f"section.step:not([hidden]) [data-l='{lang}'] h2"
                ).bounding_box()
                assert frame is not None and heading is not None
                # the screen first, across the page's width, and the words under it
                assert frame["width"] > 0.9 * 1600 or frame["height"] > 0.8 * 1000
                assert frame["y"] + frame["height"] <= heading["y"]
                page.screenshot(path=str(tmp_path / f"step3-{lang}.png"))
                assert_not_blank(tmp_path / f"step3-{lang}.png")
                # what step 3 changed is outlined on its screen: the new ledger row
                marks = page.locator(f"section.step:not([hidden]) [data-l='{lang}'] g.changed rect")
                assert marks.count() > 0 and marks.first.is_visible()
                # a click zooms the screen in, a second click (or Esc) out
                shown_frame(page, lang).click()
                zoomed = shown_frame(page, lang).bounding_box()
                assert zoomed is not None and zoomed["width"] > 1600
                page.keyboard.press("Escape")
                back = shown_frame(page, lang).bounding_box()
                assert back is not None and back["width"] == frame["width"]
                page.close()
        finally:
            browser.close()


def test_a_question_keeps_the_screen_it_is_asked_about(chromium: str, fog_page: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{fog_page.as_uri()}#step-{FENCE - 1}", wait_until="load")
            before = frame_text(page, "en")
            page.keyboard.press("ArrowRight")  # to the question, not yet revealed
            assert page.url.endswith(f"#step-{FENCE}")
            waiting = shown_frame(page, "en", "before")
            assert waiting.is_visible()  # not a blank half: the screen before the step
            assert waiting.text_content().replace("\xa0", " ") == before
            assert not shown_frame(page, "en", "after").is_visible()
            page.keyboard.press("v")
            assert not waiting.is_visible()
            assert shown_frame(page, "en", "after").is_visible()
            assert "fenced" in frame_text(page, "en")
        finally:
            browser.close()


def test_the_fleet_page_steps_through_its_moments_in_a_browser(
    chromium: str, tmp_path: Path
) -> None:
    """The exported fleet run in the scenario page's player, pressed as a reader would: →
    shows the next moment and moves the slider, the slider jumps, l switches the language."""
    from playwright.sync_api import sync_playwright

    from demo.export.cli import main as export_main

    recorded = Path(__file__).parents[1] / "fleet_runs" / "stalled_run.jsonl"
    assert export_main([str(recorded), "--out", str(tmp_path), "--lang", "both"]) == 0
    page_file = tmp_path / "index.html"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_file.as_uri(), wait_until="load")
            slider = page.locator("input.slider")
            assert page.url.endswith("#step-0") and slider.input_value() == "0"
            first = visible_text(page)
            page.keyboard.press("ArrowRight")
            assert page.url.endswith("#step-1") and slider.input_value() == "1"
            assert visible_text(page) != first  # another moment on screen
            slider.fill("2")  # the slider jumps to the last moment
            assert page.url.endswith("#step-2")
            en = visible_text(page)
            page.keyboard.press("l")
            zh = visible_text(page)
            assert zh != en and "真实进程" in zh  # the screen in Chinese
            assert errors == []
        finally:
            browser.close()
