"""The books' sentences in Chinese (a break, a late page, a redo, a refused page, two live
leases at once, an effect applied again) name workers as the one word table names them and
never press a Latin id against the characters ("这一页是worker-a凭..."): every bundled
scenario, in every mode, at every step `play` says them."""

import dataclasses
import re
from functools import cache
from importlib.resources import files

import pytest

from core.engine.config import Mode
from core.scenarios.format import Scenario, load_scenario
from core.scenarios.glossary import person_name
from core.scenarios.player import play

BUNDLED = sorted(
    p.name.removesuffix(".toml") for p in files("scenarios").iterdir() if p.name.endswith(".toml")
)
# the books' own records and the harms said beside them
SAID = frozenset({"books", "overlap", "repeat"})
# a Latin letter or digit-tailed word pressed against a character, either side
GLUED = re.compile(r"[A-Za-z][0-9]{0,2}[\u4e00-\u9fff]|[\u4e00-\u9fff][A-Za-z]")


@cache
def scenario(name: str) -> Scenario:
    return load_scenario(str(files("scenarios") / f"{name}.toml"))


def in_mode(sc: Scenario, mode: Mode) -> Scenario:
    return dataclasses.replace(sc, settings=dataclasses.replace(sc.settings, mode=mode))


def books_said(sc: Scenario, lang: str) -> list[tuple[int, str]]:
    """(step, sentence) for each sentence of the books `play` says in `lang`; a step the
    mode cannot play ends the run there, as `play` does."""
    out = []
    try:
        for record in play(sc, lang=lang):
            if record["type"] in SAID:
                out.append((int(record["step"]), str(record["say"])))
    except Exception as exc:  # a mode in which the script cannot go on stops it
        if type(exc).__name__ != "ScenarioError":
            raise
    return out


def unworded(sentence: str, workers: frozenset[str]) -> list[str]:
    """What a Chinese sentence of the books says wrongly: a glued Latin word, or a worker's
    id where the word table has its name."""
    found = GLUED.findall(sentence)
    names = sorted(
        {n for w in workers if (n := person_name(w, "zh")) is not None}, key=len, reverse=True
    )
    rest = sentence
    for name in names:
        rest = rest.replace(name, "")
    rest = re.sub(r"“[^”]*”", "", rest)  # a page's own text is the page's
    found += [
        w
        for w in workers
        if person_name(w, "zh") is not None
        and re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", rest)
    ]
    return found


def workers_of(sc: Scenario) -> frozenset[str]:
    ids = {w.id for w in sc.settings.workers}
    ids |= {str(w) for s in sc.steps if (w := getattr(s.action, "worker", None))}
    return frozenset(ids)


@pytest.mark.parametrize("mode", list(Mode), ids=lambda m: m.value)
def test_the_books_say_names_in_chinese_in_every_scenario(mode: Mode) -> None:
    bad = []
    seen = 0
    for name in BUNDLED:
        sc = scenario(name)
        workers = workers_of(sc)
        for step, sentence in books_said(in_mode(sc, mode), "zh"):
            seen += 1
            if found := unworded(sentence, workers):
                bad.append(f"{name} step {step}: {found} in {sentence[:120]!r}")
    assert bad == [], "\n".join(bad[:20])
    if mode in (Mode.CORRECT, Mode.NO_FENCING):
        assert seen, "no sentence of the books was said: the sweep saw nothing"


@pytest.mark.parametrize(
    ("sentence", "found"),
    [
        ("第 2 页是worker-a写的，那时worker-a的租约已不是任务当前的租约。", True),
        ("围栏挡下了A本来要写的：“调用 API #3”。", True),
        ("第 2 页是 worker-a 写的。", True),  # spaced, but an id where the table has a name
        ("围栏挡下了执行者 A 本来要写的：“调用 API #3”。", False),
        ("第 2 页是消费者 A 写的，盖在“msg-1/2”上。", False),
    ],
)
def test_the_check_finds_a_planted_id(sentence: str, found: bool) -> None:
    assert bool(unworded(sentence, frozenset({"A", "worker-a"}))) is found


def test_every_bundled_worker_has_a_name_in_the_word_table() -> None:
    # a Chinese sentence names a worker, never its id: the seed's "worker A 卡死，worker B
    # 接手" are 执行者 A and 执行者 B, the queue's consumers 消费者 A and B
    unnamed = {
        f"{name}: {w}"
        for name in BUNDLED
        for w in workers_of(scenario(name))
        if person_name(w, "zh") is None
    }
    assert unnamed == set()
