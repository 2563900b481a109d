"""Which mistake is this? `tui NAME --guess-mode` plays the run under one of the seed's five
mistakes, keeps its name off the screen until the room has guessed (G, then its number), and
then says which it was."""

import argparse
import html
from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.glossary import mode_name, mode_word
from core.scenarios.guess import SEED_MISTAKES, GuessRound, choose_mistake
from core.scenarios.library import open_scenario
from demo.app import BorrowedKeysApp
from demo.cli import add_app_options
from demo.screens.guess import GuessScreen
from demo.screens.main import MainScreen

SEED = 7


def test_the_round_chooses_one_of_the_five_the_same_for_the_same_seed() -> None:
    assert SEED_MISTAKES == (
        Mode.NO_EXPIRY,
        Mode.LONG_LEASE,
        Mode.NO_FENCING,
        Mode.NO_CHECKPOINT,
        Mode.CLIENT_CLOCK,
    )
    assert choose_mistake("The fog", SEED) is choose_mistake("The fog", SEED)
    assert {choose_mistake("The fog", seed) for seed in range(5)} == set(SEED_MISTAKES)
    assert choose_mistake("The fog") in SEED_MISTAKES  # no seed: any of them


def test_a_guess_is_taken_once_and_a_number_outside_the_five_is_not() -> None:
    round_ = GuessRound(Mode.NO_FENCING)
    assert round_.number == 3 and not round_.revealed
    assert round_.guess(6) is None and round_.guess(0) is None and not round_.revealed
    assert round_.guess(2) is False and round_.revealed and round_.guessed == 2
    assert round_.guess(3) is None and round_.guessed == 2  # the first guess stands


def test_the_command_line_takes_the_round_and_its_seed() -> None:
    parser = argparse.ArgumentParser()
    add_app_options(parser)
    args = parser.parse_args(["01_fog", "--guess-mode", "--guess-seed", "3"])
    assert args.guess_mode and args.guess_seed == 3


def _app(tmp_path: Path, lang: str, seed: int = SEED) -> BorrowedKeysApp:
    return BorrowedKeysApp(
        open_scenario("01_fog"),
        open_directly=True,
        lang=lang,
        live_clock=False,
        save_dir=tmp_path,
        guess=True,
        guess_seed=seed,
    )


def _screen_text(app: BorrowedKeysApp) -> str:
    svg = html.unescape(app.export_screenshot()).replace("\xa0", " ")
    return " ".join(svg.split())


def _told(mode: Mode, lang: str) -> list[str]:
    """The ways the screen could name the mode: its id, its name, what it shows."""
    return [mode.value, mode_name(mode.value, lang), mode_word(mode.value, lang).split("：")[-1]]


# each of the five at 100x30 (the seeds 0 to 4 choose all five for the fog), one at 80x24
ROUNDS = [
    *((lang, (80, 24), SEED) for lang in ("en", "zh")),
    *((lang, (100, 30), seed) for lang in ("en", "zh") for seed in range(5)),
]


@pytest.mark.parametrize(("lang", "size", "seed"), ROUNDS)
async def test_the_mode_stays_hidden_until_the_room_guesses(
    tmp_path: Path, lang: str, size: tuple[int, int], seed: int
) -> None:
    app = _app(tmp_path, lang, seed)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        session = screen.session
        secret = choose_mistake(session.title("en"), seed)
        assert session.mode is secret and session.guess is not None
        for _ in range(12):  # well into the run: the fog, the takeover
            await pilot.press("n")
            await pilot.pause()
            text = _screen_text(app)
            assert not [t for t in _told(secret, lang) if t in text], text[:400]
        hidden = "？（按 G 猜）" if lang == "zh" else "? (G: guess)"
        assert hidden in str(screen.query_one("#status").render())
        await pilot.press("m")  # the mode list would give it away
        await pilot.pause()
        assert app.screen is screen and session.mode is secret
        await pilot.press("G")
        await pilot.pause()
        assert isinstance(app.screen, GuessScreen)
        wrong = 1 if secret is not SEED_MISTAKES[0] else 2
        await pilot.press(str(wrong))
        await pilot.pause()
        said = str(app.screen.query_one("#guess-text").render())
        name = mode_name(secret.value, lang)
        assert ("其实是" + name if lang == "zh" else f"it is {name}") in said
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and session.guess.guessed == wrong
        assert name in str(screen.query_one("#status").render())  # told now


async def test_a_right_guess_is_said_so(tmp_path: Path) -> None:
    app = _app(tmp_path, "en")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen) and screen.session.guess is not None
        number = screen.session.guess.number
        await pilot.press("G", str(number))
        await pilot.pause()
        said = str(app.screen.query_one("#guess-text").render())
        assert "Right: it is " + mode_name(screen.session.mode.value, "en") in said


async def test_without_the_round_g_does_nothing_and_the_mode_is_named(tmp_path: Path) -> None:
    app = BorrowedKeysApp(
        open_scenario("01_fog"), open_directly=True, lang="en", live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await pilot.press("G")
        await pilot.pause()
        assert app.screen is screen
        assert mode_name("correct", "en") in str(screen.query_one("#status").render())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_mistake_scenarios_title_is_kept_from_the_header_too(
    tmp_path: Path, lang: str
) -> None:
    # 09's title names its own mistake ("Mistake 3: …"): the header asks instead
    app = BorrowedKeysApp(
        open_scenario("09_mistake_no_fencing"),
        open_directly=True,
        lang=lang,
        live_clock=False,
        save_dir=tmp_path,
        guess=True,
        guess_seed=SEED,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await pilot.press("n")
        await pilot.pause()
        header = str(screen.query_one("#status").render())
        assert screen.session.title(lang) not in header
        assert ("这是哪个误区？" if lang == "zh" else "Which mistake is this?") in header
