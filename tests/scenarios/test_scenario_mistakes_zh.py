"""A Chinese run says a scenario file's mistakes in Chinese, on the same `FILE:LINE:` line;
an English run's words are unchanged."""

import re
from pathlib import Path

import pytest

from core.scenarios.format import ScenarioError, load_scenario, parse_scenario
from demo.cli import main

# (file text, its line, the English as it has always been, words the Chinese must hold)
BAD: list[tuple[str, int, str, str]] = [
    ('title = "t"\nsettings = 1\n', 2, 'unknown key "settings" in the scenario', "没有 “settings”"),
    (
        'title = "t"\nlease_ttl = "abc"\n',
        2,
        'lease_ttl: bad duration \'abc\': write it like "250ms", "10s", "2m" or "1h"',
        "时长 'abc' 写不对",
    ),
    ('title = "t"\nlease_ttl = "-5s"\n', 2, 'lease_ttl must not be negative, got "-5s"', "负数"),
    ("title = 3\n", 1, "title must be a string, got an integer", "必须是字符串"),
    ('mode = "correct"\n', 1, 'missing title: add a line like title = "The fog"', "缺少标题"),
    (
        'title = "t"\n[[workers]]\nautopilot = false\n',
        2,
        'a worker needs an id, like id = "acheng"',
        "要有 id",
    ),
    (
        'title = "t"\nmode = "corect"\n',
        2,
        'unknown mode "corect" (did you mean "correct"?); modes are correct,',
        "没有 “corect” 这个模式（是不是想写 “correct”？）",
    ),
    (
        'title = "t"\n[[step]]\ndo = "kil"\n',
        3,
        'unknown action "kil" (did you mean "kill"?)',
        "没有 “kil” 这个动作",
    ),
    (
        'title = "t"\n[[tasks]]\nid = "t1"\nkind = "x"\n',
        4,
        'unknown kind "x"; kinds are ledger,',
        "任务类型",
    ),
    (
        'title = "t"\n[[workers]]\nid = "a"\n[[workers]]\nid = "a"\n',
        5,
        'duplicate worker id "a"',
        "执行者 id “a” 重复了",
    ),
    (
        'title = "t"\n[[step]]\ndo = "kill"\nworker = "nobody"\n',
        4,
        'unknown worker "nobody" (there are no workers yet)',
        "没有 “nobody” 这个执行者（这时还没有执行者）",
    ),
    (
        'title = "t"\nx = = 1\n',
        2,
        "bad TOML: invalid value (column 5)",
        "TOML 写法有误：invalid value（第 5 列）",
    ),
    ("\n", 1, "empty file: a scenario needs at least a title", "空文件"),
    (
        'title = "t"\n[[workers]]\nid = "a"\n[[step]]\ndo = "claim"\nworker = "a"\n',
        6,
        '"claim" is a manual operation, but worker "a" is on autopilot',
        "要手动操作",
    ),
    (
        'title = "t"\nlease_ttl = "5s"\nrenew_deadline = "10s"\n',
        3,
        "lease_ttl",
        "必须长于",
    ),
]

HAN = re.compile(r"[\u4e00-\u9fff]")


def _mistake(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "bad.toml")
    return caught.value


@pytest.mark.parametrize(("text", "line", "english", "chinese"), BAD)
def test_the_mistake_in_each_language(text: str, line: int, english: str, chinese: str) -> None:
    err = _mistake(text)
    assert err.line == line
    assert str(err).startswith(f"bad.toml:{line}: {english}")
    assert err.in_language("en") == str(err)
    zh = err.in_language("zh")
    assert zh.startswith(f"bad.toml:{line}: "), zh
    assert chinese in zh
    # a sentence in Chinese: no English word of the loader's own left around the ids
    said = zh.removeprefix(f"bad.toml:{line}: ")
    assert HAN.search(said), zh
    for english_word in ("unknown", "must", "missing", "duplicate", "bad ", "did you mean"):
        assert english_word not in said, zh


def test_a_name_that_is_no_file_nor_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    for lang, words in (
        ("zh", "没有这个文件，也没有叫这个名字的内置剧本（是不是想写 01_fog"),
        ("en", "no such file, nor a bundled scenario of that name (did you mean 01_fog"),
    ):
        assert main(["check", "01_fgo", "--lang", lang]) == 2
        err = capsys.readouterr().err
        assert err.startswith("01_fgo: " + words), err


BAD_FILES = sorted((Path(__file__).parents[1] / "bad_scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", BAD_FILES, ids=[p.stem for p in BAD_FILES])
def test_every_bad_file_keeps_its_place_in_chinese(path: Path) -> None:
    """Whatever a file's mistake, a Chinese run says it in Chinese, where the English does."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    err = caught.value
    where = f"{path}:{err.line}: "
    assert str(err).startswith(where)
    zh = err.in_language("zh")
    assert zh.startswith(where)
    assert "\n" not in zh
    assert err.message_zh is not None, f"no Chinese for: {err}"
    assert HAN.search(zh), zh


def test_a_file_that_is_no_scenario_text_says_so_in_chinese(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(b"a\x00b", "bad.toml")
    assert (
        caught.value.in_language("zh")
        == "bad.toml:1: 这是二进制数据（含 NUL 字节），不是 TOML 文本"
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path)
    assert caught.value.in_language("zh") == f"{tmp_path}: 读不到：这是目录，不是文件"
    assert str(caught.value) == f"{tmp_path}: cannot read: it is a directory, not a file"
