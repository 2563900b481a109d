"""Every line the audience sees is a sentence in the run's language, never a code.

Walks every step of every bundled scenario in both languages, through the presenters the
app draws with (narration, the register, refusals, the task table, the worker panes, the
header, the panels' cells), `play`'s readable transcript and the words the exported page
adds, and fails on an identifier: a snake_case word, `key = value`, JSON braces, `None`, a
backtick. No Pilot: the presenters are pure functions of the session, so the walk is fast.

Left out: a scenario's summary, questions, choices and answers (their own test holds them),
and `play`'s final figures line; `--json` and `--toml` keep codes by design.
"""

import re
from collections.abc import Iterator
from functools import cache
from importlib.resources import files
from typing import Any, cast

import pytest

from core.engine.config import Mode
from core.scenarios.format import Question, Scenario, load_scenario
from core.scenarios.player import Record, folded, play, render_line
from core.scenarios.session import Session
from core.scenarios.telling import refusal_sentence
from demo.export.page import WORDS as PAGE_WORDS
from demo.i18n import WORDS as APP_WORDS
from demo.i18n import act_words, worker_name
from demo.widgets.narration import narration_text
from demo.widgets.panels import event_line, rejection_cells
from demo.widgets.status_header import HeaderState, header_fields
from demo.widgets.task_table import task_row
from demo.widgets.worker_pane import WorkerPane, lease_bar, pane_states, pulse_line, until_line

# The seed's own column and setting names, which the engineering scenarios' narration names
# when it sets the design's SQL beside the store's ("The design's Heartbeat checks only
# owner_id and lease_token"): the seed prints them, so they are words of the lesson.
SEED_NAMES = frozenset(
    {
        "agent_tasks",
        "owner_id",
        "task_id",
        "worker_id",
        "lease_token",
        "fence_token",
        "lease_expires_at",
        "last_heartbeat_at",
        "renew_deadline",
        "updated_at",
        "lease_ttl",
        "heartbeat_every",
        "result_uri",
        "input_payload",
    }
)

SNAKE = re.compile(r"(?<![\w/.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/.-])")
KEY_VALUE = re.compile(r"\b[a-z][a-z0-9_]* ?= ?[\"'\w]")
CODE = re.compile(r"[{}`]|\bNone\b")
# the compact tokens "L1 F1" the Rejected panel once showed: a lease and a fence by letter
TOKEN = re.compile(r"\b[LF]\d+\b")


def identifiers(text: str) -> list[str]:
    """The codes in `text` a person should never read on screen."""
    found = [m for m in SNAKE.findall(text) if m not in SEED_NAMES]
    found += KEY_VALUE.findall(text)
    found += CODE.findall(text)
    found += TOKEN.findall(text)
    return found


@pytest.mark.parametrize(
    "text",
    [
        '(writer = "linzhou", fence_token = 1)',
        "write_rejected floor6 acheng L1 F1 key=floor6/3 fenced",
        'the result {"pages":6,"total":7',
        "mode: `running` taken as ownership",
        "effect None",
        "stale_write_accepted×1",
        "L1 F1 floor6/3",
        "(its token L1 F1 floor6/3; current L2 F2)",
        "awaiting_approval",
    ],
)
def test_a_planted_code_is_found(text: str) -> None:
    assert identifiers(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Acheng's page floor6/3 for floor6 is refused: fence token 1 is behind the current 2",
        "阿澄写 floor6/3 页（floor6）被拒收：围栏令牌 1 落后于当前的 2",
        "Effect agent/3/api_call was applied once",  # an idempotency key is data, not a code
        "The design's Heartbeat checks only owner_id and lease_token",
        "floor6: held by Acheng, no lease end",
    ],
)
def test_a_sentence_passes(text: str) -> None:
    assert identifiers(text) == [], text


def bundled() -> list[str]:
    return sorted(f.name for f in files("scenarios").iterdir() if f.name.endswith(".toml"))


@cache
def scenario(name: str) -> Scenario:
    return load_scenario(str(files("scenarios") / name))


def _question_texts(question: Question | None, lang: str) -> list[str]:
    if question is None:
        return []
    said = [question.text(lang), *question.choices_in(lang)]
    why = question.why_in(lang)
    return [*said, *([why] if why else [])]


def _without(text: str, parts: list[str]) -> str:
    for part in sorted(parts, key=len, reverse=True):
        if part:
            text = text.replace(part, "")
    return text


def app_texts(sc: Scenario, lang: str, mode: Mode | None = None) -> Iterator[tuple[str, str]]:
    """(where, text) for each thing the app draws, at every step of the scenario (played in
    `mode`, when given: then checks fail, and say what they found)."""
    session = Session(sc)
    if mode is not None:
        session.set_mode(mode)
    asked = [t for step in sc.steps for t in _question_texts(step.question, lang)]
    seen_events = 0
    for k in range(len(sc.steps) + 1):
        if k:
            if session.question is not None:
                yield f"step {k} asking", _without(narration_text(session, lang).plain, asked)
                session.reveal()
            else:
                session.next_step()
        where = f"step {k}"
        yield where, _without(narration_text(session, lang).plain, asked)
        snap = session.snapshot()
        state = HeaderState(
            title=session.title(lang),
            now_ms=snap.now_ms,
            speed=1.0,
            mode=session.mode.value,
            playing=False,
            forked=False,
            dropped_script=False,
            on_their_own=False,
            violations=(),
            lang=lang,
        )
        yield where + " header", " ".join(t.plain for t in header_fields(state))
        for view in snap.tasks:
            cells = task_row(view, snap.now_ms, lang)
            yield where + " task table", " | ".join(str(c) for c in cells)
        for pane in pane_states(snap, session.config, lang, faults=True):
            head = WorkerPane._head(cast(Any, None), pane.view, pane)
            yield where + " pane", head.plain
            v = pane.view
            yield where + " pane", lease_bar("x", v.store_remaining_ms, pane.ttl_ms, lang).plain
            yield where + " pane", until_line(pane.expires_at_ms, v.store_remaining_ms, lang).plain
            yield (
                where + " pane",
                pulse_line(v.heartbeat_age_ms, pane.heartbeat_ms, pane.deadline_ms, lang).plain,
            )
        for r in snap.rejections:
            yield (
                where + " rejected",
                refusal_sentence(
                    worker=r.worker_id,
                    task=r.task_id,
                    operation=r.operation,
                    reason=r.reason,
                    lang=lang,
                    key=r.key,
                    its=(r.lease_token, r.fence_token),
                    current=(r.current_lease_token, r.current_fence_token),
                ),
            )
            yield where + " rejected", " | ".join(rejection_cells(r, 2, lang))
        events = session.events(seen_events)
        for ev in events:
            yield where + " event log", event_line(ev, lang).plain
            seen_events = max(seen_events, ev.seq)
    session.close()


def play_texts(sc: Scenario, lang: str) -> Iterator[tuple[str, str]]:
    """(where, line) for `play`'s readable transcript, without questions and the figures."""
    step = 0
    for record in folded(play(sc, lang=lang), lang):
        if record["type"] in ("summary",):
            continue
        shown: Record = {
            k: v for k, v in record.items() if k not in ("summary", "ask", "choices", "why")
        }
        if record["type"] == "step":
            step = record["step"]
        for piece, _style in render_line(shown, lang):
            yield f"play step {step} {record['type']}", piece


# The Latin words a Chinese screen may show: the seed's own, where the seed writes them so
# (every Latin word of the seed: "SQL", "lease_token", "worker", "Agent", "Lease",
# "running"), the names of the other systems and commands the scenarios cite beside them,
# and the units a Chinese engineer writes in Latin too (MB).
SEED_LATIN = frozenset(
    [
        "A",
        "AI",
        "AND",
        "API",
        "Agent",
        "Approval",
        "Artifact",
        "B",
        "BIGINT",
        "Browser",
        "CC",
        "CREATE",
        "Calling",
        "Celery",
        "Checkpoint",
        "Claim",
        "Complete",
        "DEFAULT",
        "DOM",
        "Demo",
        "Fencing",
        "GC",
        "Heartbeat",
        "Human",
        "INTEGER",
        "INTERVAL",
        "Idempotency",
        "KEY",
        "Kafka",
        "Key",
        "LLM",
        "Lease",
        "Multi",
        "NOT",
        "NOW",
        "NULL",
        "OOM",
        "OR",
        "P99",
        "PRIMARY",
        "RPC",
        "RabbitMQ",
        "Renew",
        "SET",
        "SQS",
        "Store",
        "TABLE",
        "TEXT",
        "TIMESTAMP",
        "Temporal",
        "Timeout",
        "Token",
        "Tool",
        "UPDATE",
        "URL",
        "Visibility",
        "WHERE",
        "Web",
        "Worker",
        "ack",
        "agent",
        "agent_tasks",
        "attempt",
        "check",
        "checkpoint",
        "checkpoint_uri",
        "claim",
        "consumer",
        "done",
        "durable",
        "error_code",
        "execution",
        "expires_at",
        "extend",
        "fence",
        "fence_token",
        "fencing",
        "group",
        "heartbeat",
        "in",
        "input_payload_uri",
        "last_heartbeat_at",
        "lease_expires_at",
        "lease_token",
        "loop",
        "owner_id",
        "pause",
        "queued",
        "re",
        "renew_deadline",
        "result_uri",
        "running",
        "seconds",
        "status",
        "step",
        "task_id",
        "the",
        "token",
        "updated_at",
        "visibility",
        "visibility_timeout",
        "with",
        "worker",
        "worker_id",
    ]
)
CITED = frozenset(
    {"SQL", "PostgreSQL", "SEQUENCE", "Kubernetes", "ChangeMessageVisibility", "MB", "sql"}
)
LATIN_WORD = re.compile(r"(?<![\w/.:-])[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9]+)*(?![\w/:-])")
# a path, a URI or a ledger key is data the scenario wrote ("agent/3/api_call", "…/crawl")
PATHLIKE = re.compile(r"\S*[/:]\S*[A-Za-z]\S*|\S*[A-Za-z]\S*[/:]\S*")
COMMAND = re.compile(r"borrowed-keys(?: [a-z]+)?")
# a duration by a unit letter ("55s", "59m52s", "1h"), where a Chinese screen says 55秒
UNIT_LETTER = re.compile(r"\d(?:ms|[smh])\b")
# a Latin word pressed against a character: "worker-a领到", never "worker-a 领到"
GLUED = re.compile(r"[A-Za-z][0-9]{0,2}[\u4e00-\u9fff]|[\u4e00-\u9fff][A-Za-z]")


def scenario_ids(sc: Scenario) -> frozenset[str]:
    """The ids of a scenario's workers: a narration may cite a worker's id beside its name
    ("消费者 A（worker-a）"), and the sentences the run makes name workers
    (tests/scenarios/test_books_words_zh.py). A task is never one: a Chinese screen names it
    (第六层), so a task's id on a Chinese screen fails."""
    from core.scenarios.glossary import person_name

    workers = {w.id for w in sc.settings.workers}
    workers |= {
        w
        for step in sc.steps
        if person_name(w := getattr(step.action, "worker", "") or "", "zh") is None
    }
    return frozenset(workers - {""})


def english_on_chinese(text: str, ids: frozenset[str] = frozenset()) -> list[str]:
    """The English words, ids and unit letters in a Chinese line a person should not read."""
    text = COMMAND.sub("", PATHLIKE.sub("", text))
    found = [
        w
        for w in LATIN_WORD.findall(text)
        if len(w) > 1 and w not in SEED_LATIN and w not in CITED and w not in ids
    ]
    return found + UNIT_LETTER.findall(text) + GLUED.findall(text)


@pytest.mark.parametrize(
    "text",
    [
        "小徒弟把木签递了上来（superseded：已经签发了更新的租牌）",
        "（按 m 切到 correct（正确做法）模式）",
        "floor6 | 总册 | 运行中 | 阿澄 | 1 | 1 | 1 | 55s | 0:01:20 | 5s |",
        "任务无人可接的最长时间：3605s",
        "阿澄 · acheng",
        "已撤销：resume acheng（以及之后流逝的时间）",
        "0:00:00.000 worker-a领到 msg-1",
        "穷举搜索：在 no_fencing 模式下最短的",
        "故事·一：守库人与沙漏 0:00:00.000 速度 x1 模式 老规矩",
        "floor6 | 总册 | 排队中 |  | 0",
        "阿澄对 floor6 的心跳续约被拒",
        "worker-a 领到 msg-1（租约号 1，围栏令牌 1）",
    ],
)
def test_a_planted_english_word_on_a_chinese_screen_is_found(text: str) -> None:
    assert english_on_chinese(text, frozenset({"worker-a"})), text


@pytest.mark.parametrize(
    "text",
    [
        "阿澄写第 3 页（第六层）被拒收：围栏令牌 1 落后于当前的 2",
        "原文的 Heartbeat 只核对 owner_id 和 lease_token",
        "幂等键为 agent/3/api_call：执行了一次",
        "worker-a 领到消息 1（租约号 1，围栏令牌 1）",
        "故事·一：守库人与沙漏 0:00:00.000 速度 1 倍 模式 老规矩 ‖ 已暂停",
        "剩余租期 55秒 · 到 0:01:20",
        "按 → 或 n 开始第一步。命令 borrowed-keys sql 打印它",
    ],
)
def test_a_chinese_sentence_with_the_seeds_terms_passes(text: str) -> None:
    assert english_on_chinese(text, frozenset({"worker-a"})) == [], text


@pytest.mark.parametrize("name", bundled())
def test_no_english_word_on_a_chinese_screen(name: str) -> None:
    sc = scenario(name)
    ids = scenario_ids(sc)
    bad = [
        f"{where}: {found} in {text.strip()[:160]!r}"
        for where, text in (*app_texts(sc, "zh"), *play_texts(sc, "zh"))
        if (found := english_on_chinese(text, ids))
    ]
    bad += [
        f"pane title: {found} in {said!r}"
        for w in sc.settings.workers
        if (found := english_on_chinese(said := worker_name(w.id, "zh"), ids))
    ]
    bad += [
        f"toast: {found} in {said!r}"
        for step in sc.steps
        if step.action is not None
        for said in (act_words(step.action, "zh"),)
        if (found := english_on_chinese(said, ids))
    ]
    assert bad == [], "\n".join(bad[:20])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", bundled())
def test_no_code_on_screen_in_play_or_on_the_page(name: str, lang: str) -> None:
    sc = scenario(name)
    bad = [
        f"{where}: {ids} in {text.strip()[:160]!r}"
        for where, text in (*app_texts(sc, lang), *play_texts(sc, lang))
        if (ids := identifiers(text))
    ]
    assert bad == [], "\n".join(bad[:20])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("mode", list(Mode))
def test_a_failed_check_says_what_it_found_in_words(mode: Mode, lang: str) -> None:
    # the fog in every mode: where the run differs from the script, each ✗ says in words
    # what the run has instead ("floor6: no lease token"), never `lease_token = 0`
    texts = list(app_texts(scenario("01_fog.toml"), lang, mode))
    bad = [
        f"{where}: {ids} in {text[:160]!r}" for where, text in texts if (ids := identifiers(text))
    ]
    assert bad == [], "\n".join(bad[:20])
    if mode is Mode.NO_EXPIRY:
        found = "found: " if lang == "en" else "实际："
        assert any(found in text for _where, text in texts)


def test_the_app_and_page_word_tables_hold_no_code() -> None:
    for table in (APP_WORDS, PAGE_WORDS):
        for key, pair in table.items():
            for text in pair:
                # a {field} is filled before it is shown
                assert identifiers(re.sub(r"\{\w*(:[^}]*)?\}", "", text)) == [], (key, text)


def test_every_mode_is_named_in_words() -> None:
    from core.scenarios.glossary import mode_name, mode_word

    for mode in Mode:
        for lang in ("en", "zh"):
            assert identifiers(mode_name(mode.value, lang)) == []
            assert identifiers(mode_word(mode.value, lang)) == []


# The scenarios whose questions set the seed's own SQL beside the store's ("Claim's guard is
# status = 'queued' OR lease_expires_at < NOW()"): there the code is the lesson.
SEED_SQL_SCENARIOS = frozenset({"15_seed_sql.toml", "21_explored_done_twice.toml"})
SQL_CALL = re.compile(r"\b[A-Za-z]+\(\)|\bmax\(")


def question_codes(text: str, lang: str) -> list[str]:
    """The codes in a question's text: a column name where a word would do is one too,
    except inside a Chinese sentence quoting the seed, which writes its names so ("原文：…
    带着新的 lease_token 从 checkpoint 继续")."""
    # "None: her call is undone" is an English answer, not Python's None
    found = [c for c in identifiers(text) if c != "None"] + SQL_CALL.findall(text)
    if not (lang == "zh" and "原文" in text):
        found += [m for m in SNAKE.findall(text) if m in SEED_NAMES]
    return found


def _asked(question: Question | None, lang: str) -> Iterator[str]:
    while question is not None:
        yield from _question_texts(question, lang)
        question = question.follow_up


@pytest.mark.parametrize(
    "text",
    [
        "why must lease_ttl > renew_deadline > heartbeat_every?",
        "not from max(fence_token) + 1 over the task's rows",
        "`running` says the task once ran; the checker only reports stuck_task",
    ],
)
def test_a_planted_code_in_a_question_is_found(text: str) -> None:
    assert question_codes(text, "en"), text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_questions_say_in_words_what_the_seed_names_in_columns(lang: str) -> None:
    bad = [
        f"{name} step {k}: {codes} in {text[:120]!r}"
        for name in bundled()
        if name not in SEED_SQL_SCENARIOS
        for k, step in enumerate(scenario(name).steps, 1)
        for text in _asked(step.question, lang)
        if (codes := question_codes(text, lang))
    ]
    assert bad == [], "\n".join(bad)


class _PaletteStub:
    """The main screen as the palette sees it, on a session's frame: no app, no Pilot."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def shown_snapshot(self) -> Any:
        return self.session.snapshot()

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_palette_speaks_in_words(lang: str) -> None:
    # at the approval (a waiting task, a refusal): every entry the palette can list
    from core.sim.spec import TASK_KINDS
    from demo.commands import main_screen_commands

    session = Session(scenario("04_human_approval.toml"))
    while session.position < 3:
        session.reveal() if session.question is not None else session.next_step()
    said = [
        text
        for c in main_screen_commands(cast(Any, _PaletteStub(session)), lang)
        for text in (c.title, c.help)
    ]
    session.close()
    kinds = "|".join(TASK_KINDS)
    # a task's kind by its id ("Enqueue: approval task", "入队：approval 任务")
    by_id = re.compile(rf"\b({kinds}) task\b" if lang == "en" else rf"\b({kinds})\b")
    bad = [t for t in said if identifiers(t) or by_id.search(t)]
    if lang == "zh":
        bad += [t for t in said if re.search(r"[\u4e00-\u9fff]: ", t)]  # 冻结心跳: 阿澄
    assert bad == [], bad
