"""`borrowed-keys serve` in a real headless Chromium: open the page, walk scenario 01 to the
fence rejection and read it off the page.

A real-process test, like tests/real/test_real_workers.py: the server, the app it starts for the
browser tab and Chromium all run on the wall clock, so the waits here are bounded polls for
the page to show something (never sleeps standing in for virtual time). The browser is
Debian's `chromium`, driven by Playwright from PyPI through its executable path; the test
is skipped, with the reason, where either cannot be found.
"""

import os
import shlex
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from core.scenarios.library import bundled_files
from demo.widgets.status_header import HeaderState, header_fields
from tests.servekit import free_port, handshake, start_serve

SCREEN_TIMEOUT_MS = 30_000  # the page showing an expected text after a key

# This machine reaches nothing but package registries: without these flags Chromium spends
# its time (and the test's) on update checks, sync and field trials that never answer.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# textual-serve's page keeps its xterm.js terminal in a closure and draws it on a canvas, so
# the text is not in the DOM. The page's terminal object is assigned as `this.terminal = new
# Terminal(...)` in a constructor that has set `websocket_url` first: a setter on
# Object.prototype sees that one assignment, keeps the terminal where the test can reach it,
# and turns itself into an ordinary property on that object. The text is then read from the
# terminal's own buffer: what the browser shows, cell by cell.
CAPTURE_TERMINAL = """
(() => {
  Object.defineProperty(Object.prototype, "terminal", {
    configurable: true,
    set(value) {
      Object.defineProperty(this, "terminal", {
        value, writable: true, configurable: true, enumerable: true,
      });
      if ("websocket_url" in this) window.__bkTerminal = value;
    },
  });
  window.__bkScreen = () => {
    const term = window.__bkTerminal;
    if (!term) return "";
    const buffer = term.buffer.active;
    const lines = [];
    for (let y = 0; y < term.rows; y++) {
      const line = buffer.getLine(buffer.viewportY + y);
      lines.push(line ? line.translateToString(true) : "");
    }
    return lines.join("\\n");
  };
})();
"""


# xterm.js types what its hidden textarea receives.
TYPING_GOES_TO_THE_TERMINAL = """
document.activeElement === document.querySelector(".textual-terminal textarea")
"""

# Whether a character draws in the terminal's font as something other than the box a
# missing glyph gets: drawn on a canvas beside a private-use character no font has.
GLYPH_DRAWS = """
async (ch) => {
  const family = window.__bkTerminal.options.fontFamily;
  await document.fonts.load(`32px ${family}`, ch);
  const draw = (text) => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 48;
    const g = canvas.getContext("2d");
    g.font = `32px ${family}`;
    g.fillText(text, 4, 36);
    return Array.from(g.getImageData(0, 0, 48, 48).data).join(",");
  };
  const blank = draw("");
  const glyph = draw(ch);
  return glyph !== blank && glyph !== draw("\\ue000");
}
"""


FOG_INDEX = [f.name for f in bundled_files()].index("01_fog.toml")


def forked_header(lang: str) -> str:
    """The header's text after a fork that dropped the script, a recording and the workers
    on their own (every mark it can show but the safety light's violation names)."""
    state = HeaderState(
        title="t",
        now_ms=0,
        speed=1.0,
        mode="correct",
        playing=True,
        forked=True,
        dropped_script=True,
        on_their_own=True,
        violations=(),
        lang=lang,
    )
    return "".join(field.plain for field in header_fields(state))


def find_chromium() -> str | None:
    override = os.environ.get("BORROWED_KEYS_CHROMIUM")
    candidates = [override] if override else []
    candidates += ["/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture
def chromium() -> str:
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found (/usr/bin/chromium; `apt-get install chromium`)")
    return path


@pytest.fixture
def served(request: pytest.FixtureRequest) -> str:
    """`borrowed-keys serve` on a free loopback port; the page's URL."""
    return start_serve(request)[1]


def screen(page: Any) -> str:
    return str(page.evaluate("window.__bkScreen()"))


def wait_for_screen(page: Any, *needles: str) -> str:
    """Bounded poll (in the page) until the terminal shows every needle; the screen's text."""
    try:
        page.wait_for_function(
            "(needles) => needles.every((n) => window.__bkScreen().includes(n))",
            arg=list(needles),
            timeout=SCREEN_TIMEOUT_MS,
            polling=100,
        )
    except Exception as exc:  # Playwright's TimeoutError: say what the page showed instead
        pytest.fail(
            f"page never showed {needles!r} ({type(exc).__name__}); it shows:\n{screen(page)}"
        )
    return screen(page)


def assert_not_blank(png: Path) -> None:
    """The screenshot shows a drawn app: many colours, none covering nearly everything."""
    from PIL import Image

    with Image.open(png) as image:
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=rgb.width * rgb.height) or []
    assert len(colours) >= 16, f"{png}: only {len(colours)} colours"
    commonest = max(count for count, _ in colours)
    assert commonest < 0.9 * rgb.width * rgb.height, f"{png}: one colour covers ~everything"


def test_serve_walks_scenario_01_to_the_fence_rejection_in_a_browser(
    chromium: str, served: str, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    shot = tmp_path / "serve-01-rejected.png"
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a new, empty profile
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 1000},
        )
        try:
            # Only the server is reachable: the page's web-font link would wait on a network
            # this machine does not have.
            def only_the_server(route: Any) -> None:
                if route.request.url.startswith(served.rstrip("/")):
                    route.continue_()
                else:
                    route.abort()

            context.route("**/*", only_the_server)
            context.add_init_script(CAPTURE_TERMINAL)
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(served, wait_until="load", timeout=SCREEN_TIMEOUT_MS)

            wait_for_screen(page, "The fog: a frozen heartbeat")  # the picker
            # No click, no tab: the keys go to the terminal as soon as the page is there (a
            # click would pick whichever scenario is under it).
            assert page.evaluate(TYPING_GOES_TO_THE_TERMINAL), page.evaluate(
                "document.activeElement.outerHTML.slice(0, 80)"
            )
            assert page.title() == "Borrowed Keys"
            # The header after a fork: every sign in it draws (U+2442, the fork sign it
            # had, drew as an empty box in the browser and in SVG renders).
            for ch in sorted(set(forked_header("en")) - set(" ")):
                assert page.evaluate(GLYPH_DRAWS, ch), f"{ch!r} (U+{ord(ch):04X}) draws as a box"
            # The story's chapters come first in the picker; 01_fog follows them.
            for _ in range(FOG_INDEX):
                page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
            wait_for_screen(page, "The fog: a frozen heartbeat", "Acheng", "Step 0")
            for _ in range(14):
                page.keyboard.press("n")  # n: next step
            wait_for_screen(page, "accept her page?")  # step 14 asks first
            page.keyboard.press("v")  # v: reveal the answer; step 14 plays
            wait_for_screen(page, "Step 14 of")
            page.keyboard.press("3")  # 3: the Rejected tab
            # The narration also says "fenced": wait for the tab's own header and row.
            text = wait_for_screen(page, "Operation", "fenced", "(now 2)")
            page.screenshot(path=str(shot))
        finally:
            context.close()

    rejected = text[text.index("Operation") :]
    row = next(line for line in rejected.splitlines() if "fenced" in line)
    # Acheng's late write, refused by the fence: her fence token 1 against the task's newest, 2.
    assert "Acheng" in row and "write" in row, row
    assert "1 (now 2)" in row, row
    assert "Step 14 of" in text  # still the fence rejection, not a later step

    assert_not_blank(shot)
    # BORROWED_KEYS_SERVE_SHOT=docs/screenshots/serve-browser.png regenerates the README's figure.
    if target := os.environ.get("BORROWED_KEYS_SERVE_SHOT"):
        shutil.copyfile(shot, target)


# -- the command around the browser: no Chromium needed ----------------------------------------


def test_a_port_in_use_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from demo.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert (
        err
        == f"borrowed-keys serve: port {port} on 127.0.0.1 is in use; pick another with --port\n"
    )


def test_a_bad_scenario_is_refused_before_serving(capsys: pytest.CaptureFixture[str]) -> None:
    from demo.cli import main

    assert main(["serve", "--port", str(free_port()), "no/such/file.toml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no/such/file.toml" in err


def test_only_a_non_loopback_address_gets_the_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from demo import serve
    from demo.cli import main

    started: list[str] = []
    monkeypatch.setattr(
        serve.AppServer, "serve", lambda self, debug=False: started.append(self.command)
    )
    assert main(["serve", "--host", "127.0.0.1", "--port", str(free_port())]) == 0
    assert capsys.readouterr().err == ""
    assert main(["serve", "--host", "0.0.0.0", "--port", str(free_port()), "--lang", "zh"]) == 0
    err = capsys.readouterr().err
    # in the language serve speaks (--lang zh): one line, the prefix in ASCII
    assert err.count("\n") == 1 and err.startswith("borrowed-keys serve: 警告：")
    assert "0.0.0.0" in err and "操控这个应用" in err
    assert serve.is_loopback("localhost") and not serve.is_loopback("0.0.0.0")
    # Each browser tab gets this app with the same options, not some other program (the
    # shell that starts it becomes it).
    assert shlex.split(started[-1])[:1] + shlex.split(started[-1])[2:] == [
        "exec",
        "-m",
        "demo",
        "--lang",
        "zh",
    ]


def test_the_page_points_its_socket_at_the_address_the_browser_used(served: str) -> None:
    """Behind `ssh -L 9000:localhost:8000` the browser says Host: localhost:9000; the page's
    WebSocket must go there, not to the port the server was started with."""
    import urllib.request

    page = urllib.request.Request(served, headers={"Host": "localhost:9000"})
    with urllib.request.urlopen(page, timeout=10) as response:
        html = response.read().decode()
    assert 'data-session-websocket-url="ws://localhost:9000/ws"' in html


def _handshake_status(served: str, origin: str) -> str:
    """The status line the server answers a WebSocket handshake from `origin` with."""
    conn, status = handshake(served, origin=origin)
    conn.close()
    return status


def test_a_page_from_another_site_cannot_open_the_socket(served: str) -> None:
    """Any site open in the presenter's browser could script a socket to localhost: the
    server answers only its own page."""
    assert _handshake_status(served, "http://evil.example").startswith("HTTP/1.1 403")
    own = served.rstrip("/")
    assert _handshake_status(served, own).startswith("HTTP/1.1 101")


# -- the page before the app: its text fits the window, an icon, no splash ---------------------

NO_SPLASH = """
() => ({
  splash: document.querySelector(".intro-dialog, .intro") !== null,
  terminalShown: getComputedStyle(document.querySelector(".textual-terminal")).opacity,
  icon: (document.querySelector("link[rel=icon]") || {}).href || "",
})
"""

ICON_DRAWS = """
async (href) => {
  const image = new Image();
  image.src = href;
  await image.decode();
  return image.naturalWidth > 0;
}
"""

TERMINAL_SIZE = """
() => {
  const term = window.__bkTerminal;
  return {font: term.options.fontSize, cols: term.cols, rows: term.rows};
}
"""


def test_the_page_fits_its_text_to_the_window_shows_an_icon_and_no_splash(
    chromium: str, served: str, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    from demo.screens.layout import NARROW_HEIGHT, NARROW_WIDTH

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 1000},
        )
        try:
            asked: list[str] = []
            context.on("request", lambda request: asked.append(request.url))
            context.add_init_script(CAPTURE_TERMINAL)
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(served, wait_until="domcontentloaded", timeout=SCREEN_TIMEOUT_MS)
            first = page.evaluate(NO_SPLASH)  # before the app has said anything
            assert not first["splash"]  # no logo dialog in front of the terminal
            assert first["terminalShown"] == "1"
            assert first["icon"].startswith("data:image/svg+xml")
            assert page.evaluate(ICON_DRAWS, first["icon"])
            wait_for_screen(page, "The fog: a frozen heartbeat")  # the picker
            size = page.evaluate(TERMINAL_SIZE)
            # without ?fontsize: larger text than textual-serve's 16 px, and still the
            # app's large layout (not one column that scrolls)
            assert int(size["font"]) == 20, size
            assert size["cols"] >= NARROW_WIDTH and size["rows"] >= NARROW_HEIGHT, size
            assert not any(url.endswith("/favicon.ico") for url in asked), asked

            page.goto(served + "?fontsize=16", wait_until="load", timeout=SCREEN_TIMEOUT_MS)
            wait_for_screen(page, "The fog: a frozen heartbeat")
            assert int(page.evaluate(TERMINAL_SIZE)["font"]) == 16  # as asked
        finally:
            context.close()
