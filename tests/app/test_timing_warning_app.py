"""A scenario that renews slower than half its ttl is warned about where it loads: in the
player's and the app's language, as a toast that stays, as a line above its first step, and
in the exported page's header.

The seed: "续约频率快于租期的一半。 例如租期 60 秒，worker 每 20 秒发一次 heartbeat。"
"""

from pathlib import Path

import pytest

from core.engine.config import LeaseConfig
from core.scenarios.format import load_scenario
from core.scenarios.sentences import timing_warnings
from demo.app import BorrowedKeysApp
from demo.screens.main import WARNING_TOAST_S, MainScreen
from demo.widgets.narration import NarrationPanel

SCRATCH = """\
title = "Scratch: a heartbeat too slow"
lease_ttl = "60s"
heartbeat_every = "40s"
renew_deadline = "50s"

[[workers]]
id = "acheng"

[[tasks]]
id = "floor6"
steps = 2
step_time = "10s"

[[step]]
say = "Acheng works."
say_zh = "阿澄干活。"
do = "advance"
by = "5s"

[[step]]
say = "More."
say_zh = "再干。"
do = "advance"
by = "5s"
"""

SAID = {
    "en": "warning: heartbeat_every (40s) is more than half of lease_ttl (1m)",
    "zh": "警告：heartbeat_every（40s）超过了 lease_ttl（1m）的一半",
}


def scratch(tmp_path: Path) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text(SCRATCH, encoding="utf-8")
    return path


def test_the_english_warning_is_the_one_the_config_gives(tmp_path: Path) -> None:
    scenario = load_scenario(scratch(tmp_path))
    assert timing_warnings(scenario, "en") == scenario.warnings
    config = LeaseConfig(ttl_ms=60_000, heartbeat_every_ms=40_000, renew_deadline_ms=50_000)
    assert scenario.warnings[0].endswith(config.timing_warnings()[0])
    assert SAID["zh"] in timing_warnings(scenario, "zh")[0]


def test_a_scenario_within_the_rule_has_none(tmp_path: Path) -> None:
    path = tmp_path / "fine.toml"
    path.write_text(SCRATCH.replace('"40s"', '"20s"'), encoding="utf-8")
    scenario = load_scenario(path)
    assert scenario.timing_notes == () and timing_warnings(scenario, "zh") == ()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_app_warns_when_the_scenario_loads(tmp_path: Path, lang: str) -> None:
    scenario = load_scenario(scratch(tmp_path))
    app = BorrowedKeysApp(
        scenario, open_directly=True, lang=lang, live_clock=False, save_dir=tmp_path
    )
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await pilot.pause()
        toasts = [n for n in app._notifications if SAID[lang] in str(n.message)]
        assert len(toasts) == 1 and toasts[0].timeout == WARNING_TOAST_S >= 15
        narration = screen.query_one("#narration", NarrationPanel)
        assert narration._text is not None and SAID[lang] in narration._text.plain
        await pilot.press("n")  # the first step: still said above it
        await pilot.pause()
        assert narration._text is not None and SAID[lang] in narration._text.plain
        await pilot.press("n")  # later steps keep the box for the step itself
        await pilot.pause()
        assert narration._text is not None and SAID[lang] not in narration._text.plain


def test_the_player_warns_in_its_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.tools.cli import main

    path = scratch(tmp_path)
    for lang in ("en", "zh"):
        main(["play", str(path), "--lang", lang])
        err = capsys.readouterr().err
        assert err.startswith(f"{path}:3") and SAID[lang] in err


def test_check_warns_in_its_language_as_play_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.tools.cli import main

    path = scratch(tmp_path)
    for lang in ("en", "zh"):
        main(["play", str(path), "--lang", lang])
        played = capsys.readouterr().err
        assert main(["check", str(path), "--lang", lang]) == 0
        out, err = capsys.readouterr()
        assert (
            err == played == "".join(w + "\n" for w in timing_warnings(load_scenario(path), lang))
        )
        ok = {
            "en": f"{path}: ok (2 steps, 0 expectations)",
            "zh": f"{path}：通过（2 步，0 条检查）",
        }
        assert SAID[lang] in err and out == ok[lang] + "\n"
    main(["check", str(path)])  # the default is play's: English
    assert SAID["en"] in capsys.readouterr().err


def test_check_with_a_bad_language_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.tools.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["check", str(scratch(tmp_path)), "--lang", "fr"])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "invalid choice: 'fr'" in err.splitlines()[-1]


def test_the_exported_page_carries_the_warning_in_each_language(tmp_path: Path) -> None:
    from demo.export.frames import Recording
    from demo.export.page import build_page

    scenario = load_scenario(scratch(tmp_path))
    recordings = [Recording(lg, (100, 30), ()) for lg in ("en", "zh")]
    html = build_page(scenario, recordings, command="borrowed-keys export slow.toml")
    assert html.count('class="warning"') == 2
    assert all(text in html for text in SAID.values())
