"""Interview mode in the app: the room answers a question by its number before v, is told
right or not and why, answers the follow-up the same way, and the run ends with a score; and
at a question nothing moves until v, which leaves the run paused."""

import re
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from core.scenarios.library import open_scenario
from demo.app import BorrowedKeysApp
from demo.screens.main import MainScreen

HERE = Path(__file__).parents[1]
INTERVIEW = HERE / "scenarios_ok" / "interview.toml"

# What the screen says, in each language.
WORDS = {
    "en": {
        "right": "✓ Right.",
        "wrong": "✗ Not quite: the answer is 2.",
        "follow": "Follow-up: She is still working.",
        "why": "The lease expires 60s after",
        "follow_why": "The keeper does not guess",
        "score": "Interview: questions right 0 of 1, follow-ups right 1 of 1.",
        "score_all": "Interview: questions right 1 of 1, follow-ups right 0 of 1.",
        "hint": "(1-3: answer · v: reveal)",
    },
    "zh": {
        "right": "✓ 答对了。",
        "wrong": "✗ 不对：答案是 2。",
        "follow": "追问：她还在干活。",
        "why": "最后一次心跳 60 秒后租约过期",
        "follow_why": "守库人不去猜",
        "score": "面试得分：1 道题答对 0 道，1 道追问答对 1 道。",
        "score_all": "面试得分：1 道题答对 1 道，1 道追问答对 0 道。",
        "hint": "（按 1-3 作答 · 按 v 揭晓）",
    },
}


def app_for(path: Path | str, tmp_path: Path, lang: str, *, interview: bool) -> BorrowedKeysApp:
    return BorrowedKeysApp(
        open_scenario(str(path)),
        open_directly=True,
        lang=lang,
        live_clock=False,
        save_dir=tmp_path,
        interview=interview,
    )


def screen_of(app: BorrowedKeysApp) -> MainScreen:
    assert isinstance(app.screen, MainScreen)
    return app.screen


def panel(screen: MainScreen) -> str:
    return screen.query_one("#panels", TabbedContent).active


def said(screen: MainScreen) -> str:
    return str(screen.query_one("#narration").render())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_wrong_answer_then_a_right_follow_up_then_the_score(
    tmp_path: Path, lang: str
) -> None:
    words = WORDS[lang]
    app = app_for(INTERVIEW, tmp_path, lang, interview=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = screen_of(app)
        s = screen.session
        await pilot.press("n", "n")  # step 2 asks
        await pilot.pause()
        assert s.question is not None and words["hint"] in said(screen)
        assert words["right"] not in said(screen) and words["wrong"] not in said(screen)
        await pilot.press("3")  # a wrong answer: told at once, with why; the step waits
        await pilot.pause()
        shown = said(screen)
        assert words["wrong"] in shown and words["why"] in shown.replace("\n", "")
        assert words["follow"] in shown  # the follow-up comes next
        assert s.question is not None and s.position == 1
        assert panel(screen) == "tab-ledger"  # 3 answered, no panel
        await pilot.press("1")  # the follow-up, right
        await pilot.pause()
        shown = said(screen).replace("\n", "")
        assert words["right"] in shown and words["follow_why"] in shown
        assert s.question is not None and s.position == 1  # still nothing played
        await pilot.press("2")  # nothing waits for an answer now: the key opens its panel
        await pilot.pause()
        assert panel(screen) == "tab-checkpoints"
        await pilot.press("v", "n", "v")  # step 3 asks an open question
        await pilot.pause()
        assert s.at_end
        assert words["score"] in said(screen).replace("\n", "")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_right_answer_and_a_follow_up_left_unanswered(tmp_path: Path, lang: str) -> None:
    words = WORDS[lang]
    app = app_for(INTERVIEW, tmp_path, lang, interview=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = screen_of(app)
        await pilot.press("n", "n", "2")
        await pilot.pause()
        shown = said(screen)
        assert words["right"] in shown and words["follow"] in shown
        await pilot.press("v", "n", "v")  # the follow-up left unanswered
        await pilot.pause()
        assert words["score_all"] in said(screen).replace("\n", "")


async def test_interview_mode_is_off_by_default_and_i_turns_it_on(tmp_path: Path) -> None:
    app = app_for(INTERVIEW, tmp_path, "en", interview=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = screen_of(app)
        s = screen.session
        await pilot.press("n", "n", "2")  # off: 2 opens the Checkpoints panel, as ever
        await pilot.pause()
        assert panel(screen) == "tab-checkpoints"
        assert "✓ Right." not in said(screen) and "(v: reveal)" in said(screen)
        await pilot.press("i", "1")
        await pilot.pause()
        assert s.interview.on and app.interview
        assert "✗ Not quite: the answer is 2." in said(screen)
        assert panel(screen) == "tab-checkpoints"
        await pilot.press("v", "n", "v")  # step 3 asks an open question
        await pilot.pause()
        assert "Interview: questions right 0 of 1" in said(screen).replace("\n", "")
        await pilot.press("i")
        await pilot.pause()
        assert "Interview:" not in said(screen)


async def test_the_key_bar_leads_with_the_answer_keys_while_an_answer_waits(
    tmp_path: Path,
) -> None:
    app = app_for(INTERVIEW, tmp_path, "en", interview=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = screen_of(app)
        await pilot.press("n", "n")
        await pilot.pause()
        bar = str(screen.query_one("#keybar").render()).lstrip()
        assert bar.startswith("1-3 Answer")
        await pilot.press("2", "1")  # both answered: v leads again
        await pilot.pause()
        assert str(screen.query_one("#keybar").render()).lstrip().startswith("v Reveal")


async def test_space_at_a_question_arms_nothing_and_after_v_the_run_is_paused(
    tmp_path: Path,
) -> None:
    """01_fog: 14 steps on, its question waits; Space, then v: step 14 plays, and the run
    does not go on through steps 15-16 before the presenter can speak."""
    app = app_for("01_fog", tmp_path, "en", interview=False)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = screen_of(app)
        s = screen.session
        for _ in range(14):
            await pilot.press("right")
        await pilot.pause()
        assert s.question is not None and s.position == 13
        await pilot.press("space")
        await pilot.pause()
        assert not screen.playing
        assert any("nothing moves until v" in str(n.message) for n in app._notifications)
        await pilot.press("v")
        await pilot.pause()
        assert s.position == 14 and not screen.playing
        for _ in range(3):  # beats that are due play nothing: the run is paused
            screen._autoplay_wall = -1e9
            screen.on_tick()
            await pilot.pause()
        assert s.position == 14 and not screen.playing


async def test_at_80x24_what_the_answer_said_is_scrolled_into_sight(tmp_path: Path) -> None:
    from textual.containers import VerticalScroll

    app = app_for("01_fog", tmp_path, "en", interview=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        for _ in range(14):
            await pilot.press("right")
        await pilot.press("1", "2")  # the question (wrong), then its follow-up (right)
        await pilot.pause()
        box = screen.query_one("#narration-box", VerticalScroll)
        assert box.max_scroll_y > 0  # too long for the box: its end is what was just said
        assert box.scroll_y == box.max_scroll_y
        await pilot.press("v")
        await pilot.pause()
        assert box.scroll_y == 0  # the step's own narration from its first line


def test_tui_interview_starts_the_app_in_interview_mode_and_serve_passes_it_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse

    from demo.cli import main
    from demo.serve import app_command

    started: list[bool] = []

    def run(app: BorrowedKeysApp) -> int:
        started.append(app.interview)
        return 0

    monkeypatch.setattr(BorrowedKeysApp, "run", run)
    assert main(["tui", "01_fog", "--interview"]) == 0
    assert main(["tui", "01_fog"]) == 0
    assert started == [True, False]
    args = argparse.Namespace(
        file="01_fog", lang=None, mode=None, sandbox=False, db=None, interview=True
    )
    assert app_command(args).endswith("--interview")


@pytest.mark.parametrize(
    ("lang", "asked", "answered"),
    [
        ("en", "Follow-up: Your sink is an object store", "Answer: 2. Write each version"),
        ("zh", "追问：下游是一个对象存储", "答案：2. 每个版本按令牌分开写"),
    ],
)
def test_the_exported_page_tells_the_follow_up_after_the_answer(
    lang: str, asked: str, answered: str
) -> None:
    from demo.export.frames import Frame
    from demo.export.page import _question_html

    question = open_scenario("13_portfolio_demo").steps[4].question
    assert question is not None
    frame = Frame(index=5, keys=(), panel="tab-rejected", svg="", question=question)
    shown, answer = (re.sub(r"<[^>]+>", "", html) for html in _question_html(frame, lang))
    assert asked not in shown  # the page shows the question first, as the app does
    assert asked in answer and answered in answer
    assert answer.index(asked) > answer.index("2.")  # after the question's own answer
