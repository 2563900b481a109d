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

ROOT = Path(__file__).resolve().parents[2]
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
    ("self-fencing is 主动停手", re.compile("自我围栏")),
)


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _codes() -> tuple[str, ...]:
    from core.engine.config import Mode
    from core.engine.errors import RejectReason
    from core.engine.vocabulary import EventKind, TaskStatus
    from core.sim.checker import ViolationKind

    kinds = (EventKind, TaskStatus, RejectReason, Mode, ViolationKind)
    return tuple(sorted({str(m.value) for kind in kinds for m in kind}, key=len, reverse=True))


# The engine's codes (statuses, reasons, events, modes, violations) as the register and the
# files spell them. In Chinese prose a code is glossed where it first appears, as the glossary
# writes it: "（superseded：已有新租约）", or "running（运行中）". One quoted as SQL
# ("status = 'running'") or given to a command ("explore --mode seed_sql") is code, not prose.
CODE = re.compile(r"(?<![A-Za-z_])(" + "|".join(map(re.escape, _codes())) + r")(?![A-Za-z_])")


def unglossed(text: str) -> list[str]:
    """The codes of a Chinese text left without a gloss (a later mention of one glossed
    before in the same text may stay bare)."""
    text = re.sub(r"\{[^{}]*\}", "", text)  # a table's placeholders are not prose
    glossed: set[str] = set()
    found = []
    for m in CODE.finditer(text):
        code, before, after = m[1], text[: m.start()], text[m.end() :]
        if (before.endswith("（") and after.startswith("：")) or (
            after.startswith("（") and _cjk(after[1:2])
        ):
            glossed.add(code)
        elif (
            not (before.endswith("'") and after.startswith("'"))
            and not before.endswith("--mode ")
            and code not in glossed
        ):
            found.append(code)
    return found


def _chinese_prose(text: str) -> bool:
    """A string of a table, not a docstring (English that may quote a Chinese word)."""
    return not text.startswith(('"""', "'''"))


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
        if pattern.search(unquoted(text))
    ]
    assert found == []


# The seed's own sentence, quoted as its own ("原文说：“…”"), keeps the seed's words, even
# where the screen's word differs (the seed's lock passage says 持有者).
SEED_QUOTE = re.compile("原文[^“”]{0,4}“[^”]*”")


def unquoted(text: str) -> str:
    return SEED_QUOTE.sub("", text)


def test_only_a_quotation_of_the_seed_keeps_its_own_word() -> None:
    quoted = "原文说：“锁默认假设持有者在场。”"
    assert not any(p.search(unquoted(quoted)) for _why, p in WRONG)
    assert any(p.search(unquoted("锁默认假设持有者在场。")) for _why, p in WRONG)


def test_the_check_finds_a_planted_wrong_word(tmp_path: Path) -> None:
    planted = tmp_path / "words.py"
    planted.write_text(
        'WORDS = {"w": ("worker", "工作者"), "t": ("token", "租约 2，到期"),\n'
        '         "s": ("self-fencing", "自我围栏")}\n'
    )
    hits = [why for _line, text in module_strings(planted) for why, p in WRONG if p.search(text)]
    assert hits == ["a worker is 执行者", "the lease token is 租约号", "self-fencing is 主动停手"]


def register_misuses(path: Path) -> list[str]:
    """The word pairs ("en", "zh") of a module whose Chinese says 登记簿 for something that is
    not the event log (the glossary: "借出登记簿 | the loan register | events")."""
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline)
        if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    ]
    found = []
    for en, comma, zh in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (
            en.type == zh.type == tokenize.STRING
            and comma.string == ","
            and "登记簿" in zh.string
            and not re.search("event log|register", en.string, re.IGNORECASE)
        ):
            found.append(f"{path.name}:{zh.start[0]}: {en.string} is not the event log")
    return found


@pytest.mark.parametrize("module", TABLE_MODULES)
def test_登记簿_is_only_the_event_log(module: str) -> None:
    assert register_misuses(ROOT / module) == []


def test_the_check_finds_a_planted_登记簿(tmp_path: Path) -> None:
    planted = tmp_path / "words.py"
    planted.write_text(
        'WORDS = {"e": ("Event log", "登记簿"), "s": ("saved_transcript",\n'
        '         ("transcript", "登记簿"))}\n'
    )
    assert register_misuses(planted) == ['words.py:2: "transcript" is not the event log']


@pytest.mark.parametrize("module", TABLE_MODULES)
def test_no_bilingual_table_leaves_an_english_code_unglossed_in_chinese(module: str) -> None:
    found = [
        f"{module}:{line}: {code} unglossed: {text}"
        for line, text in module_strings(ROOT / module)
        if _chinese_prose(text)
        for code in unglossed(text)
    ]
    assert found == []


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_no_scenario_leaves_an_english_code_unglossed_in_chinese(path: Path) -> None:
    found = [
        f"{where}: {code} unglossed: {text[:60]}"
        for where, text in scenario_strings(path)
        for code in unglossed(text)
    ]
    assert found == []


def test_the_check_finds_a_planted_unglossed_code(tmp_path: Path) -> None:
    assert unglossed("账房拒收（fenced）。") == ["fenced"]
    assert unglossed("心跳被拒：已经有了更新的租约（superseded）") == ["superseded"]
    assert unglossed("那一行写着 running，没有东西会过期") == ["running"]
    assert unglossed("被拒（superseded：已有新租约），之后又是 superseded") == []
    assert unglossed("写着 running（运行中），永远停在 running") == []
    assert unglossed("原文只写 status = 'done'") == []
    assert unglossed("由搜索找到（borrowed-keys explore --mode seed_sql）") == []
    planted = tmp_path / "words.py"
    planted.write_text('WORDS = {"r": ("refused (fenced)", "账房拒收（fenced）")}\n')
    hits = [
        c
        for _line, text in module_strings(planted)
        if _chinese_prose(text)
        for c in unglossed(text)
    ]
    assert hits == ["fenced"]


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
