"""`borrowed-keys export`: the frames are the app's, the page is whole and asks nothing of the
network, the sentences say what the checks check, and bad input is one line.

Kept short: scenario 13 (six steps) at 80 x 24, and the first steps of 01_fog where a
committed snapshot shows the same moment. The browser reads the page in test_export_browser.
"""

import asyncio
import re
from html import escape
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import Scenario
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.sim.spec import FreezeHeartbeat
from demo.app import BorrowedKeysApp
from demo.export.cli import command_line, export, main, record_langs
from demo.export.frame_svg import SharedStyles, changes, page_svg
from demo.export.frames import DEFAULT_SIZE, Recording, record
from demo.export.page import build_page
from demo.widgets.narration import step_refusal
from tests.app.apps import settled

SNAPSHOTS = Path(__file__).parents[1] / "app" / "__snapshots__" / "test_tui_snapshots"
SMALL = (80, 24)


def normalize(svg: str) -> str:
    """Without Rich's per-export id, as the snapshot plugin stores its SVGs."""
    return re.sub(r"\bterminal-\d+-([\w-]+)", r"terminal-\1", svg)


async def app_screen(scenario: Scenario, lang: str, size: tuple[int, int], keys: list[str]) -> str:
    """A fresh app, the keys pressed, the screenshot taken as the snapshot tests take it."""
    app = BorrowedKeysApp(scenario, open_directly=True, lang=lang, live_clock=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press(*keys)
        await settled(pilot)
        return app.export_screenshot(simplify=True)


@pytest.fixture(scope="module")
def portfolio() -> Scenario:
    return open_scenario("13_portfolio_demo")


@pytest.fixture(scope="module")
def portfolio_en(portfolio: Scenario) -> Recording:
    return asyncio.run(record(portfolio, "en", SMALL))


# -- the frames are the app's -------------------------------------------------------------------


def test_a_frame_is_the_committed_snapshot_of_that_step() -> None:
    # test_fog_after_three_steps: n, n, n at 160 x 48; the exporter opens no other panel on
    # the way (the Ledger is the one on screen), so its third frame is that snapshot. Both
    # languages are recorded as the command records them, side by side.
    fog = record_langs(open_scenario("01_fog"), ("en", "zh"), DEFAULT_SIZE, steps=3)
    for recording in fog:
        assert [f.keys for f in recording.frames] == [(), ("n",), ("n",), ("n",)]
        name = f"test_fog_after_three_steps[{recording.lang}].svg"
        expected = (SNAPSHOTS / name).read_text()
        assert normalize(recording.frames[3].svg) == expected, recording.lang


@pytest.fixture(scope="module")
def portfolio_wide(portfolio: Scenario) -> Recording:
    """At the export's size. On a screen as small as 80 x 24 a panel's table is scrolled
    into sight under its note once the note is laid out, and whether by one row more
    depends on when the screen's refresh timer fires between the app's messages: a fresh
    app driven by Pilot draws either, from one run to the next."""
    return asyncio.run(record(portfolio, "en", DEFAULT_SIZE, steps=5))


async def test_each_frame_is_a_fresh_app_given_the_same_keys(
    portfolio: Scenario, portfolio_wide: Recording
) -> None:
    # the recorder waits for the app's messages and refreshes, not for the process to idle
    # as Pilot does: the frames are the same
    frames = portfolio_wide.frames
    # step 1 checks A's checkpoint: the app opens Checkpoints by itself; step 3 asks first,
    # then A's lease ends while A still believes in it (Belief vs truth); step 5 asks, then
    # shows A's refused page
    assert frames[1].keys == ("n",) and frames[1].panel == "tab-checkpoints"
    assert frames[3].keys == ("n", "v") and frames[3].panel == "tab-timeline"
    assert frames[5].keys == ("n", "v") and frames[5].panel == "tab-rejected"
    assert [f.index for f in frames] == list(range(6))
    for k in (3, 5):
        keys = [key for f in frames[1 : k + 1] for key in f.keys]
        assert normalize(frames[k].svg) == normalize(
            await app_screen(portfolio, "en", DEFAULT_SIZE, keys)
        ), f"frame {k}"
    assert frames[4].svg != frames[5].svg


def panels(name: str, mode: Mode | None = None) -> dict[int, str | None]:
    """The panel each step of a bundled scenario asks for, played without the app."""
    session = Session(open_scenario(name), mode=mode)
    out: dict[int, str | None] = {}
    for index in range(1, len(session.steps) + 1):
        outcome = session.next_step() or session.reveal()  # a question is asked first
        assert outcome is not None
        out[index] = None if outcome.panel is None else outcome.panel.tab
    return out


def test_the_panel_follows_what_the_step_is_about() -> None:
    fog = panels("01_fog")
    assert fog[4] == "tab-checkpoints"  # she checkpoints
    assert fog[9] is None  # time passes, nothing to show: the panel on screen stays
    # her lease runs out while she still believes in it, and Linzhou claims the floor
    assert fog[12] == "tab-timeline"
    assert fog[13] == "tab-ledger"  # and writes page 3
    assert fog[14] == fog[15] == fog[16] == "tab-rejected"  # the fence, then the lease check
    assert fog[17] == "tab-ledger"  # the pages of both owners
    # without a fence the stale page is the lesson, not the checkpoint refused beside it
    assert panels("09_mistake_no_fencing")[5] == "tab-ledger"
    assert panels("06_tool_calling")[1] == "tab-effects"
    # a successor after a crash reads the box: the dead holder believed nothing past it
    assert panels("03_crash_resume")[3] == "tab-checkpoints"
    # where belief and truth part, by default; and where the file names the panel
    for name, step in (
        ("02_fire_midnight_return", 3),
        ("00_story_4a_fire", 3),
        ("13_portfolio_demo", 3),
    ):
        assert panels(name)[step] == "tab-timeline", name
    assert panels("17_self_fencing")[4] == panels("17_self_fencing")[7] == "tab-timeline"


@pytest.mark.parametrize("mode", [Mode.NO_FENCING, Mode.BEFORE_FENCE])
def test_where_a_mistake_lets_the_stale_page_in_the_step_shows_the_books_not_an_empty_refusal(
    mode: Mode,
) -> None:
    # 01's step 14 expects the fence to refuse Acheng's page 3; without one the page goes into
    # the books, and the harm is there: "两套互相覆盖的世界".
    assert panels("01_fog", mode)[14] == "tab-ledger"
    assert panels("01_fog")[14] == "tab-rejected"


def test_a_step_whose_expected_outcome_does_not_come_shows_what_came_instead() -> None:
    # Without expiry Acheng still holds the floor: her box and her completion are taken, and
    # no Rejected table is opened for a refusal that never comes.
    no_expiry = panels("01_fog", Mode.NO_EXPIRY)
    assert (no_expiry[15], no_expiry[16]) == ("tab-checkpoints", None)
    # 22 is written for a mode that lets the late page in; in the correct one it is refused,
    # and the refusal is the news, not an empty Ledger.
    assert panels("22_explored_page_after_done")[3] == "tab-ledger"
    assert panels("22_explored_page_after_done", Mode.CORRECT)[3] == "tab-rejected"


# -- the page -----------------------------------------------------------------------------------


def test_belief_against_truth_stands_beside_each_screen(
    portfolio: Scenario, portfolio_en: Recording
) -> None:
    page = build_page(portfolio, [portfolio_en], command="borrowed-keys export 13_portfolio_demo")
    sections = page.split('<section class="step"')[1:]
    for f in portfolio_en.frames:
        leased = f.timeline is not None and any(r.leases for r in f.timeline.rows)
        # from the first claim on, drawn from the frame's own timeline
        assert ('class="belief"' in sections[f.index]) == leased, f.index
    # at the takeover A's belief outlives its lease: the red gap is drawn in that frame
    assert "url(#tl-en3-g-" in sections[3]


def test_the_page_inlines_every_frame_and_names_nothing_outside(
    portfolio: Scenario, portfolio_en: Recording
) -> None:
    html = build_page(portfolio, [portfolio_en], command="borrowed-keys export 13_portfolio_demo")
    # the only URL left is the SVG namespace, which is a name, not a request
    assert set(re.findall(r"https?://[^\s\"')]+", html)) == {"http://www.w3.org/2000/svg"}
    assert "cdnjs" not in html
    assert not re.search(r"url\(\s*[\"']?(https?:|//)", html)  # no font or image by URL
    assert html.count("@font-face") == 2  # the page's own two, by local() names only
    assert "default-src 'none'" in html  # the CSP: a fetch that slipped in would be refused
    for f in portfolio_en.frames:
        assert f'id="step-{f.index}"' in html
        assert f'aria-label="The app&#x27;s screen after step {f.index}"' in html
    questions = re.findall(
        r'<section class="step" id="step-(\d+)" data-step="\d+" data-question', html
    )
    assert questions == ["3", "5"]
    assert "<code>borrowed-keys export 13_portfolio_demo</code>" in html
    assert "in the correct run" in html
    why = portfolio.steps[4].question.why if portfolio.steps[4].question else None
    assert why is not None and escape(why) in html
    assert portfolio.summary is not None and escape(portfolio.summary) in html


_STYLE_RULE = re.compile(r"\.([\w-]+)\s*\{([^}]*)\}")
_TEXT_EL = re.compile(r'<text class="([\w-]+)"([^>]*)>([^<]*)</text>')
_RECT_EL = re.compile(r'<rect fill="([^"]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height')


Drawing = tuple[list[tuple[str, str, str]], dict[tuple[str, str], list[list[float]]]]


def drawing(svg: str, css: str) -> Drawing:
    """What a frame draws: each text with its attributes (no clip) and its style's rule, and
    where on each line each colour's background runs."""
    rules = {m.group(1): " ".join(m.group(2).split()) for m in _STYLE_RULE.finditer(css)}
    texts = [
        (
            rules.get(m.group(1), "?"),
            re.sub(r' clip-path="[^"]*"', "", m.group(2)),
            m.group(3).replace("&#160;", "\u00a0"),
        )
        for m in _TEXT_EL.finditer(svg)
    ]
    cover: dict[tuple[str, str], list[list[float]]] = {}
    for m in _RECT_EL.finditer(svg):
        x, width = float(m.group(2)), float(m.group(4))
        runs = cover.setdefault((m.group(1), m.group(3)), [])
        if runs and abs(runs[-1][1] - x) < 0.05:
            runs[-1][1] = round(x + width, 1)
        else:
            runs.append([x, round(x + width, 1)])
    return texts, cover


def test_the_page_draws_each_frame_as_the_app_drew_it(portfolio_en: Recording) -> None:
    shared = SharedStyles()
    on_page = [shared.frame(page_svg(f.svg, f"en{f.index}")) for f in portfolio_en.frames]
    for f, svg in zip(portfolio_en.frames, on_page, strict=True):
        inlined = page_svg(f.svg, "x")  # the frame on its own, with its own style
        own_css = re.search(r"<style>(.*?)</style>", inlined, re.DOTALL)
        assert own_css is not None
        app_css = re.sub(r"\.terminal-x-", ".", own_css.group(1))
        app_svg = re.sub(r'class="terminal-x-', 'class="', inlined)
        assert drawing(svg, shared.css()) == drawing(app_svg, app_css), f.index
        # one group a line carries the clip its texts had, from the page's one set
        assert 'clip-path="url(#d0-line-' in svg and "<clipPath" not in svg


def test_the_frames_shared_styles_are_once_on_the_page(
    portfolio: Scenario, portfolio_en: Recording
) -> None:
    html = build_page(portfolio, [portfolio_en], command="borrowed-keys export 13_portfolio_demo")
    frames = re.findall(r'<svg class="rich-terminal".*?</svg>', html, re.DOTALL)
    assert len(frames) == len(portfolio_en.frames)
    # every frame of the export repeats this block; the page holds it once
    assert html.count("font-variant-east-asian: full-width") == 1
    assert html.count('<clipPath id="d0-line-0">') == 1
    for svg in frames:
        assert "<style" not in svg and "<defs" not in svg and "terminal-" not in svg
    assert html.count("<style>") == 1


@pytest.fixture(scope="module")
def fog_en() -> Recording:
    return asyncio.run(record(open_scenario("01_fog"), "en", DEFAULT_SIZE, steps=3))


def outlined(svg: str, spans: list[tuple[float, float, float]]) -> list[str]:
    """The texts of a frame that fall inside the outlined spans."""
    found = []
    for m in re.finditer(r'<text [^>]*x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        x, y = float(m.group(1)), float(m.group(2))
        if any(y == sy and sx <= x < sx + w for sx, sy, w in spans):
            found.append(m.group(3))
    return found


def test_what_a_step_changed_is_outlined(fog_en: Recording) -> None:
    shared = SharedStyles()
    frames = [shared.frame(page_svg(f.svg, "x")) for f in fog_en.frames]
    # step 1, the claim: Acheng's name comes into the task's row and her pane
    claimed = outlined(frames[1], changes(frames[0], frames[1]))
    assert {"Acheng", "running", "working"} <= {t.strip("\u00a0") for t in claimed}, claimed
    # step 3, page 1 written: the new ledger row, not the title line with its clock
    written = outlined(frames[3], changes(frames[2], frames[3]))
    assert any("floor6/1" in t for t in written), written
    assert not any("The\u00a0fog" in t for t in written)
    assert changes(frames[3], frames[3]) == []
    page = build_page(open_scenario("01_fog"), [fog_en], command="borrowed-keys export 01_fog")
    sections = page.split('<section class="step"')[1:]
    assert '<g class="changed"' not in sections[0]  # nothing before step 0 to compare with
    assert all('<g class="changed"' in s for s in sections[1:])


def test_a_wide_character_run_is_sized_by_its_cells() -> None:
    svg = '<text class="terminal-5-r1" x="0" y="1" textLength="24.4" clip-path="c">起雾</text>'
    assert 'textLength="48.8"' in page_svg(svg, "zh1")
    assert "terminal-zh1-r1" in page_svg(svg, "zh1")
    latin = '<text class="terminal-5-r1" x="0" y="1" textLength="24.4" clip-path="c">ab</text>'
    assert 'textLength="24.4"' in page_svg(latin, "en1")


# -- the command ----------------------------------------------------------------------------------


def test_the_command_writes_the_page_and_a_small_preview(tmp_path: Path) -> None:
    pytest.importorskip("resvg_py")
    from demo.export.preview import PreviewError, font_files

    try:
        font_files()
    except PreviewError as exc:
        pytest.skip(str(exc))
    from PIL import Image

    gif = tmp_path / "13.gif"
    out = tmp_path / "page"
    argv = ["13_portfolio_demo", "--out", str(out), "--lang", "zh", "--size", "80x24"]
    assert main([*argv, "--preview", str(gif)]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "作品集演示" in html and '<html lang="zh-Hans" data-lang="zh">' in html
    assert '<div class="l" data-l="en"' not in html
    assert "<code>borrowed-keys export 13_portfolio_demo --lang zh --size 80x24</code>" in html
    with Image.open(gif) as image:
        assert image.format == "GIF" and image.n_frames == 7  # step 0 and the six steps
        image.seek(5)  # A's refused page: the frame is drawn, not blank
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16) or []
        assert len(colours) >= 8
    assert gif.stat().st_size < 2_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["13.gif", "page"]  # no temp files
    assert (out / "index.html").stat().st_mode & 0o044 == 0o044  # readable when published


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no/such/file.toml"], "no/such/file.toml"),
        (["01_fog", "--preview", "x.png"], "x.png: the preview is a .gif file"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err
    assert err.startswith("borrowed-keys export: ")
    assert list(tmp_path.iterdir()) == []


def test_an_out_folder_that_is_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine")
    assert main(["13_portfolio_demo", "--out", str(taken)]) == 2
    assert capsys.readouterr().err == f"borrowed-keys export: {taken}: exists and is not a folder\n"
    assert taken.read_text() == "mine"


@pytest.mark.parametrize("size", ["80", "10x10", "80x24x2", "500x40"])
def test_a_bad_size_is_refused_by_the_parser(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["13_portfolio_demo", "--size", size])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("borrowed-keys export: argument --size")


def test_the_console_script_routes_export(monkeypatch: pytest.MonkeyPatch) -> None:
    from demo import cli

    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(
        "demo.export.cli.run", lambda args: seen.append((args.scenario, args.lang)) or 0
    )
    assert cli.main(["export", "01_fog", "--lang", "en"]) == 0
    assert seen == [("01_fog", "en")]


def test_a_saved_exploration_exports_like_a_bundled_scenario(tmp_path: Path) -> None:
    # two steps of 01_fog, then an act of the person (a fork), saved as the app's `s` saves
    session = Session(open_scenario("01_fog"))
    session.next_step()
    session.next_step()
    session.act(FreezeHeartbeat("acheng"))
    saved = session.save_as_scenario(tmp_path / "bk-fog-1.toml")
    out = tmp_path / "page"
    assert main([str(saved), "--out", str(out), "--lang", "en", "--size", "80x24"]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "The fog: a frozen heartbeat (recorded)" in html
    steps = re.findall(r'<section class="step" id="step-(\d+)"', html)
    assert steps[:3] == ["0", "1", "2"] and len(steps) >= 5  # two played, the fork, the end
    assert "No safety violation" in html  # the figures' check, as a sentence


def test_each_language_says_when_it_is_done(
    tmp_path: Path, portfolio: Scenario, capfd: pytest.CaptureFixture[str]
) -> None:
    # the languages are recorded in processes of their own, which still speak on stderr
    export(portfolio, tmp_path, name="13_portfolio_demo", size=SMALL, steps=2)
    lines = sorted(capfd.readouterr().err.splitlines())
    assert [line.split(" in ")[0] for line in lines] == [
        "borrowed-keys export: en: 2 steps recorded",
        "borrowed-keys export: zh: 2 steps recorded",
    ]


def test_on_a_terminal_each_step_is_said_as_it_is_recorded(
    tmp_path: Path, portfolio: Scenario, capfd: pytest.CaptureFixture[str]
) -> None:
    export(portfolio, tmp_path, name="x", langs=("zh",), size=SMALL, steps=2, per_step=True)
    # a Chinese page's export speaks Chinese after its `PROG:`
    assert capfd.readouterr().err.splitlines() == [
        f"borrowed-keys export: 中文页面已录下第 {k} 步，共 2 步" for k in (0, 1, 2)
    ]


def test_export_lang_zh_says_a_bad_file_and_a_bad_folder_in_chinese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "t"\nmode = "corect"\n', encoding="utf-8")
    assert main([str(bad), "--lang", "zh"]) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith(f"borrowed-keys export: {bad}:2: 没有 “corect” 这个模式")
    taken = tmp_path / "a-file"
    taken.write_text("", encoding="utf-8")
    assert main(["01_fog", "--out", str(taken), "--lang", "zh"]) == 2
    assert (
        capsys.readouterr().err.strip() == f"borrowed-keys export: {taken}: 已经存在，却不是文件夹"
    )
    # --lang both (the default) speaks English, as before
    assert main(["01_fog", "--out", str(taken)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"borrowed-keys export: {taken}: exists and is not a folder"
    )


def test_the_made_with_line_leaves_the_defaults_out() -> None:
    assert command_line("01_fog", ("en", "zh"), DEFAULT_SIZE) == ("borrowed-keys export 01_fog")
    assert command_line("my run.toml", ("zh",), (80, 24)) == (
        "borrowed-keys export 'my run.toml' --lang zh --size 80x24"
    )


def test_export_keeps_only_the_first_steps_when_asked(tmp_path: Path, portfolio: Scenario) -> None:
    done = export(portfolio, tmp_path, name="13_portfolio_demo", langs=("en",), size=SMALL, steps=2)
    assert done.steps == 2 and done.preview is None
    html = done.page.read_text(encoding="utf-8")
    assert 'id="step-2"' in html and 'id="step-3"' not in html


def test_a_full_disk_is_one_line_that_names_the_file_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno
    import os
    from typing import Any

    from core.scenarios.writer import write_whole
    from demo.export import cli

    def no_room(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def export_page(scenario: Any, out: Path, **_kw: Any) -> Any:
        write_whole(out / "index.html", b"<html></html>")

    monkeypatch.setattr(Path, "write_bytes", no_room)
    monkeypatch.setattr(cli, "export", export_page)
    out = tmp_path / "out"
    assert cli.main(["13_portfolio_demo", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"borrowed-keys export: {out / 'index.html'}: cannot write: No space left on device\n"
    )
    assert list(tmp_path.iterdir()) == []  # the folder made for the page is gone too


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "step 14 cannot run"), ("zh", "第 14 步无法执行")]
)
def test_a_step_this_mode_cannot_play_is_said_on_the_page_as_play_says_it(
    lang: str, said: str
) -> None:
    # the page and the app word the step alike (one function), as `play` does
    session = Session(open_scenario("00_story_2_fog"), mode=Mode.NO_EXPIRY)
    outcome = None
    while session.position < 14:
        outcome = session.next_step() or session.reveal()
    assert outcome is not None and outcome.stopped is not None
    refused = step_refusal(outcome, lang)
    assert refused is not None and refused.startswith(said), refused
