"""Chinese lines are spaced as Chinese is: no ASCII space between two Chinese characters
(in a template, or where a word is filled in), a key the file spells is quoted before a
full-width colon, and a warning keeps its `FILE:LINE: ` ASCII, as an error does.

Every word table is found by walking the modules: a dict of (en, zh) pairs, or of Chinese
strings, in core.scenarios, core.search and demo."""

import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import core.scenarios
import core.search
import demo
from core.scenarios.format import load_scenario
from core.scenarios.sentences import timing_warnings

_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_CJK = f"[{_HAN}\u3000-\u303f\uff00-\uffef]"  # with the Chinese punctuation
_SPACED = re.compile(f"{_CJK} +{_CJK}")
# Fields a Chinese run fills with Chinese words (a person, a reason, a kind of value): a
# space beside one, next to a Chinese character, is a space between two Chinese words.
WORD_FIELDS = ("who", "reason", "got", "meaning", "rule", "refusal", "cause", "error")
_FIELD_SPACED = re.compile(
    rf"{_CJK} +\{{(?:{'|'.join(WORD_FIELDS)})[}}!:]|\{{(?:{'|'.join(WORD_FIELDS)})\}} +{_CJK}"
)
# a key as a file spells it (snake case, two letters or more) right before a full-width
# colon: quote it (“value”：) as the same sentence quotes its other keys
# (a key of the keyboard is one letter: "v：揭晓")
_KEY_COLON = re.compile(r"(?<![A-Za-z0-9_“])[a-z][a-z0-9_]*[a-z0-9]：")
# Where a word field holds a number, not a word: its space is the one before a number.
NUMBERS = {"core.scenarios.error_words.FILE_MISTAKES['at_least']"}


def _modules() -> Iterator[ModuleType]:
    for package in (core.scenarios, core.search, demo):
        for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not found.name.endswith("__main__"):  # that one runs the app
                yield importlib.import_module(found.name)


def _chinese_strings() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    seen: set[int] = set()
    for module in _modules():
        for table_name, table in vars(module).items():
            if not isinstance(table, dict) or id(table) in seen:
                continue
            seen.add(id(table))
            for key, value in table.items():
                if (
                    isinstance(value, tuple)
                    and len(value) == 2
                    and all(isinstance(v, str) for v in value)
                ):
                    zh = value[1]
                elif isinstance(value, str) and re.search(f"[{_HAN}]", value):
                    zh = value
                else:
                    continue
                out.append((f"{module.__name__}.{table_name}[{key!r}]", zh))
    return out


STRINGS = _chinese_strings()


def test_the_tables_were_found() -> None:
    names = {where.split("[")[0] for where, _ in STRINGS}
    for table in ("core.scenarios.error_words.FILE_MISTAKES", "demo.i18n.WORDS"):
        assert table in names
    assert len(STRINGS) > 800


def test_no_ascii_space_between_two_chinese_words() -> None:
    bad = [f"{where}: {zh!r}" for where, zh in STRINGS if _SPACED.search(zh)]
    bad += [
        f"{where}: {zh!r}"
        for where, zh in STRINGS
        if _FIELD_SPACED.search(zh) and where not in NUMBERS
    ]
    assert bad == []


def test_a_key_before_a_full_width_colon_is_quoted() -> None:
    bad = [f"{where}: {zh!r}" for where, zh in STRINGS if _KEY_COLON.search(zh)]
    assert bad == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("这里是 {got}", True),
        ("这里是{got}", False),
        ("第 {n} 步", False),
        ("借来的钥匙 已满", True),
        ("却没有 value：加上", True),
        ("却没有 “value”：加上", False),
    ],
)
def test_the_checks_catch_what_they_are_for(text: str, found: bool) -> None:
    caught = bool(_SPACED.search(text) or _FIELD_SPACED.search(text) or _KEY_COLON.search(text))
    assert caught is found


def test_a_timing_warning_keeps_its_place_in_ascii(tmp_path: Path) -> None:
    path = tmp_path / "slow.toml"
    path.write_text(
        'title = "t"\nlease_ttl = "1m"\nheartbeat_every = "40s"\nrenew_deadline = "50s"\n',
        encoding="utf-8",
    )
    (zh,) = timing_warnings(load_scenario(path), "zh")
    assert zh.startswith(f"{path}:3: 警告：heartbeat_every（40s）"), zh
    (en,) = timing_warnings(load_scenario(path), "en")
    assert en.startswith(f"{path}:3: warning: heartbeat_every (40s)"), en


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ("t3", "守库人仍把任务 3 借在其名下"),  # a name ending in its number keeps the space
        ("floor6", "守库人仍把第六层借在其名下"),  # a name of characters sits against them
    ],
)
def test_a_task_named_by_its_number_stands_apart_from_the_character_after_it(
    task: str, said: str
) -> None:
    from core.scenarios.telling import spaced, task_words
    from demo.i18n import tr

    assert spaced(tr("still_lent", "zh", task=task_words(task, "zh")), "zh") == said
