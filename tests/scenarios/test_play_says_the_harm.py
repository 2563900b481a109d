"""`play` says what the app shows beside the books: two live leases at once (11) and a side
effect applied again (12), from the same snapshot, in the glossary's one set of words."""

import dataclasses
from functools import cache
from importlib.resources import files

import pytest

from core.engine.config import Mode
from core.scenarios.format import Scenario, load_scenario
from core.scenarios.player import Record, folded, play, render_line


@cache
def scenario(name: str) -> Scenario:
    return load_scenario(str(files("scenarios") / f"{name}.toml"))


@cache
def records(name: str, lang: str) -> tuple[Record, ...]:
    return tuple(play(scenario(name), lang=lang))


def text(name: str, lang: str) -> str:
    return "".join(
        piece
        for record in folded(iter(records(name, lang)), lang)
        for piece, _style in render_line(record, lang)
    )


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        (
            "en",
            "✗ Acheng's lease 1 and Linzhou's lease 2 were live at once from 0:00:15 to 0:00:20"
            " (5 s): the store's clock held Acheng's lease until 0:01:00.",
        ),
        (
            "zh",
            "✗ 从 0:00:15 到 0:00:20（5 秒），阿澄的租约号 1 和临舟的租约号 2 同时有效："
            "按守库人的钟，阿澄的租约要到 0:01:00 才到期。",
        ),
    ],
)
def test_play_says_who_held_two_live_leases_and_from_when_to_when(lang: str, line: str) -> None:
    said = text("11_mistake_client_clock", lang)
    assert line in said
    (ended,) = [r for r in records("11_mistake_client_clock", lang) if r.get("until")]
    assert ended["workers"] == ["acheng", "linzhou"] and ended["lease_tokens"] == [1, 2]
    assert (ended["from"], ended["until"]) == (15.0, 20.0)
    # while it lasted, the step that let the second lease in said so
    assert any(
        r["type"] == "overlap" and r["until"] is None
        for r in records("11_mistake_client_clock", lang)
    )


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        (
            "en",
            "✗ At 0:01:35 Linzhou's call (step 3: the internal API) ran again (fence token 2):"
            " charged twice: 2 × 120.",
        ),
        (
            "zh",
            "✗ 0:01:35，临舟的调用（第 3 步：调用内部 API）又执行了一次（围栏令牌 2）："
            "扣了两次：2 × 120。",
        ),
    ],
)
def test_play_says_the_second_charge_and_what_it_cost(lang: str, line: str) -> None:
    assert line in text("12_mistake_no_idempotency", lang)
    (again,) = [r for r in records("12_mistake_no_idempotency", lang) if r["type"] == "repeat"]
    assert (again["key"], again["times"], again["amount"]) == ("agent/3/api_call", 2, 120)


def test_the_correct_run_says_neither() -> None:
    for name in ("11_mistake_client_clock", "12_mistake_no_idempotency"):
        sc = scenario(name)
        right = dataclasses.replace(
            sc, settings=dataclasses.replace(sc.settings, mode=Mode.CORRECT)
        )
        kinds = {r["type"] for r in play(right)}
        assert not kinds & {"overlap", "repeat"}, name
