"""Chinese that reads as written in Chinese: one word per concept, as the shared glossary
gives them, in every bilingual table (the glossary, the app's words, the transcript's, the
controls, the help page) and in every scenario's Chinese text."""

import io
import re
import tokenize
import tomllib
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLE_MODULES = (
    "core/scenarios/glossary.py",
    "core/scenarios/player.py",
    "core/scenarios/sentences.py",
    "demo/widgets/cjk_wrap.py",
    "demo/i18n.py",
    "demo/controls.py",
    "demo/screens/help.py",
)

# (what is wrong, the pattern): each concept has one Chinese word
WRONG: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a worker is 执行者", re.compile("工作者")),
    ("an agent is Agent, as the seed writes it", re.compile("代理|智能体")),
    ("the lease token is 租约号", re.compile(r"租约令牌|租约 \d+(?![:\d])")),
    ("the holder is 持有人", re.compile("持有者")),
    ("登记簿 is only the event log, not the saved transcript", re.compile("保存登记簿")),
)


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def module_strings(path: Path) -> Iterator[tuple[int, str]]:
    """The Chinese string literals of a module, with their lines (comments left out)."""
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline):
        if tok.type == tokenize.STRING and _cjk(tok.string):
            yield tok.start[0], tok.string


def scenario_strings(path: Path) -> Iterator[tuple[str, str]]:
    """Every Chinese text of a scenario file: titles, summaries, narration, questions."""

    def walk(node: object, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, f"{where}[{i}]")
        elif isinstance(node, str) and _cjk(node):
            yield where, node

    yield from walk(tomllib.loads(path.read_text("utf-8")), path.name)


SCENARIOS = sorted(Path(str(files("scenarios"))).glob("*.toml"))


@pytest.mark.parametrize("module", TABLE_MODULES)
def test_every_bilingual_table_says_one_word_per_concept(module: str) -> None:
    found = [
        f"{module}:{line}: {why}: {text}"
        for line, text in module_strings(ROOT / module)
        for why, pattern in WRONG
        if pattern.search(text)
    ]
    assert found == []


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_scenario_says_one_word_per_concept(path: Path) -> None:
    found = [
        f"{where}: {why}: {text[:60]}"
        for where, text in scenario_strings(path)
        for why, pattern in WRONG
        if pattern.search(text)
    ]
    assert found == []


def test_the_check_finds_a_planted_wrong_word(tmp_path: Path) -> None:
    planted = tmp_path / "words.py"
    planted.write_text('WORDS = {"w": ("worker", "工作者"), "t": ("token", "租约 2，到期")}\n')
    hits = [why for _line, text in module_strings(planted) for why, p in WRONG if p.search(text)]
    assert hits == ["a worker is 执行者", "the lease token is 租约号"]


def test_ledger_pages_read_in_chinese_in_a_chinese_run() -> None:
    from core.scenarios.glossary import VILLAGES, ledger_value
    from core.sim import kinds

    assert set(kinds._VILLAGES) == set(VILLAGES)
    page = kinds.LEDGER.run_step("floor6", 3, 6, {"total": 100}).page
    zh = ledger_value(page, "zh")
    assert (
        zh.startswith("第 3 页：")
        and "石（累计 " in zh
        and not any(c.isascii() and c.isalpha() for c in zh)
    )
    assert ledger_value("page 1: north bank, 120 dan", "zh") == "第 1 页：北岸 120 石"
    assert ledger_value(page, "en") == page


@pytest.mark.parametrize("width", [9, 11, 15])
def test_the_help_never_breaks_a_number_from_its_unit(width: int) -> None:
    from demo.screens.help import wrap

    for line in wrap("租期 60 秒，worker 每 20 秒发一次 heartbeat，共 3 步、12 页。", width):
        assert not line.startswith(("秒", "步", "页")) and not line.rstrip().endswith(
            ("60", "20", " 3", "12")
        ), line
