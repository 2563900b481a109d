"""The help page: the five ideas, each beside its counterpart in the story."""

from typing import ClassVar

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core.scenarios import glossary
from demo.widgets.cjk_wrap import wrap
from demo.widgets.task_table import COLUMNS as TASK_COLUMNS
from demo.widgets.task_table import header

# (idea, its story word, what it means, where it shows). The idea's and the story's words
# are the glossary's; `{name}` in the last two is a glossary word (a column, a panel, a
# concept), filled in the chosen language so the help says what the screen says.
Prose = tuple[str, str]
IDEAS: tuple[tuple[str, str, Prose, Prose], ...] = (
    (
        "lease",
        "lease",
        (
            "Ownership with an end: owner, lease token, expires_at, judged by the store's clock.",
            "有期限的所有权：持有人、{lease_token}、到期时刻，由存储的时钟裁定。",
        ),
        (
            "Task table ({owner}, {lease_token}, {expires_in}, {expires_at}); each worker pane's "
            "bar and its until line.",
            "任务表（{owner}、{lease_token}、{expires_in}、{expires_at}）；"
            "每个执行者面板里的进度条和到期时刻。",
        ),
    ),
    (
        "heartbeat",
        "heartbeat",
        (
            "The holder renews before the sand runs out, on its own path, apart from the work.",
            "持有人在沙漏流尽之前续约，走自己的路，与干活分开。",
        ),
        (
            "Pane pulse (♥ age), {last_heartbeat} column; {freeze_heartbeat} stops it.",
            "面板上的脉搏（♥ 多久前），任务表的{last_heartbeat}；{freeze_heartbeat}让它停下。",
        ),
    ),
    (
        "fencing_token",
        "fence",
        (
            "Every new holder gets a higher number; the ledger, in the same database as the "
            "leases, takes a page only from the current, live lease with the task's newest "
            "fence token. A system outside can only refuse numbers below the highest it has seen.",
            "每换一位持有人，编号就更大；总册和租约同在一个数据库里，只收当前有效租约、带着最新"
            "围栏令牌的页，编号落后的一律拒收。数据库之外的系统只能记住见过的最大编号，拒收更小的。",
        ),
        (
            "{fence_token} column, {ledger} tab, {rejected} tab (a refused call's lease and "
            "fence, the current ones beside).",
            "任务表的{fence_token}、{ledger}页签、{rejected}页签（被拒调用的租约号和围栏令牌，旁边是当前的）。",
        ),
    ),
    (
        "checkpoint",
        "checkpoint",
        (
            "Progress saved under the fence token, so a successor resumes instead of restarting.",
            "在围栏令牌之下保存进度，接手的人从中断处继续，而不是从头再来。",
        ),
        (
            "{checkpoints} tab; {checkpoint_step} column.",
            "{checkpoints}页签；任务表的{checkpoint_step}。",
        ),
    ),
    (
        "idempotency",
        "idempotency",
        (
            "A side effect carries a key; a repeat is deduplicated, not applied again. An "
            "outside system never sees the lease: the key is what makes a late repeat harmless.",
            "副作用带着幂等键；重复的一次被去重，而不是再执行一遍。外部系统看不到租约，"
            "迟到的重复只能靠它化解。",
        ),
        (
            "{effects} tab: {effect_applied} against {effect_deduplicated}.",
            "{effects}页签：{effect_applied}对比{effect_deduplicated}。",
        ),
    ),
)


# The seed's lessons beyond the five ideas: the lease card, the skeleton with its formula and
# rule, and the portfolio demo mapped to where each item lives. (title, lines), en and zh.
Section = tuple[Prose, tuple[Prose, ...]]
LESSONS: tuple[Section, ...] = (
    (
        ("The lease card", "租约卡片"),
        (
            # "一个可用的 Lease 至少要有四个字段 …… 如果要把它做成生产可用，通常还会再加两个"
            ("The seed's four minimum fields:", "原文说至少要有四个字段："),
            ("owner_id: who holds it ({owner} column)", "owner_id：谁拿到了执行权（{owner}列）"),
            (
                "lease_token: which round ({lease_token} column, the pane's lease N)",
                "lease_token：本轮租约（{lease_token}列，面板上的租约号）",
            ),
            (
                "expires_at: when the right ends, by the store clock ({expires_in}, {expires_at})",
                "expires_at：资格失效的时刻，按存储的时钟（{expires_in}、{expires_at}）",
            ),
            (
                "renew_deadline: when the next renewal must come (the pane's renew-by line)",
                "renew_deadline：下一次续约必须发生的时刻（面板上的续约截止）",
            ),
            ("and two for production:", "生产可用再加两个："),
            ("attempt: which try ({attempt} column)", "attempt：第几次尝试（{attempt}列）"),
            (
                "fence_token: only grows ({fence_token} column, {ledger} tab)",
                "fence_token：只增不减（{fence_token}列、{ledger}页签）",
            ),
        ),
    ),
    (
        ("Durable execution", "可恢复执行"),
        (
            (
                "Lease: who may do it now. Checkpoint: where the next one carries on. "
                "Idempotency: doing it again breaks nothing. Fencing Token: an old holder "
                "cannot change the new world.",
                "Lease 负责“谁现在能做”，Checkpoint 负责“下一位从哪接着做”，Idempotency "
                "负责“重复做时别把世界打坏”，Fencing Token 负责“旧人回来也改不了新世界”。",
            ),
            (
                "durable execution = bounded ownership + heartbeat renewal + fencing token "
                "+ intermediate results saved + idempotent side effects",
                "可恢复执行 = 有限所有权 + 心跳续约 + 围栏令牌 + 中间结果落盘 + 幂等副作用",
            ),
            (
                "A long task keeps the right to run only while it can prove it is alive; once "
                "the proof is gone, the right must be reclaimable, and the old holder must "
                "lose the right to write.",
                "一个长任务只有在“能证明自己还活着”时才继续拥有执行权；一旦证明消失，"
                "资格必须可回收，旧持有人也必须失去改写权。",
            ),
            # "于是，旧 worker 即使复活，也只能成为“过期知识的携带者”，无法成为“当前世界的改写者”。"
            (
                "Even awake again, an old holder can only be a carrier of stale knowledge, "
                "never a rewriter of the current world.",
                "旧 worker 即使复活，也只能成为“过期知识的携带者”，无法成为“当前世界的改写者”。",
            ),
            # The seed's closing words, the last section's: "它靠的是：任务可以中断、资格可以续借、
            # 结果可以接力、旧人回来也推不翻新世界。守住这一点，长任务才不会变成长赌局。"
            (
                "A usable Agent does not get there in one breath: a task can be interrupted, "
                "a right renewed, a result handed on, and an old holder who comes back cannot "
                "overturn the new world. Hold to that, and a long task never becomes a long "
                "gamble.",
                "真正可用的 Agent，不靠一口气跑到底。它靠的是：任务可以中断、资格可以续借、"
                "结果可以接力、旧人回来也推不翻新世界。守住这一点，长任务才不会变成长赌局。",
            ),
        ),
    ),
    (
        ("The seed's portfolio demo, and where each part lives", "原文的作品集 Demo，各部分在哪"),
        (
            (
                "a task queue table: agent_tasks (core/engine/models.py); the task table",
                "一个任务队列表：agent_tasks（core/engine/models.py）；任务表",
            ),
            (
                "a claim interface: LeaseStore.claim; borrowed-keys sql prints its SQL",
                "一个 worker claim 接口：LeaseStore.claim；borrowed-keys sql 打印它的 SQL",
            ),
            (
                "a heartbeat interface: LeaseStore.heartbeat, from the worker's own loop",
                "一个 heartbeat 续约接口：LeaseStore.heartbeat，由执行者单独的心跳循环发出",
            ),
            (
                "a checkpoint store: LeaseStore.save_checkpoint; the {checkpoints} tab",
                "一个 checkpoint 存储：LeaseStore.save_checkpoint；{checkpoints}页签",
            ),
            (
                "a fence-token test: tests/engine/test_fence_rule.py",
                "一个 fence token 校验过期写入的测试：tests/engine/test_fence_rule.py",
            ),
            (
                "the fault demo (A stalls, B takes over, A's write is refused): scenario 13",
                "一个故障演示（A 卡死，B 接手，A 恢复后写入被拒）：场景 13",
            ),
        ),
    ),
)


def _fill(prose: Prose, lang: str) -> str:
    """The prose in `lang`, its `{name}`s replaced by the glossary's words."""
    text = glossary.pick(prose, lang)
    words = {**glossary.CONCEPTS, **glossary.COLUMNS, **glossary.PANELS}
    words["freeze_heartbeat"] = ("Freeze heartbeat", glossary.ACTIONS["freeze_heartbeat"][1])
    said = {k: glossary.pick(v, lang) for k, v in words.items()}
    # a task column by the header the table shows ("Lease token"), both of them where the
    # narrow table's differs ("Expires in / Time left")
    for column in TASK_COLUMNS:
        shown = [_header_words(header(column, lang, narrow), lang) for narrow in (False, True)]
        said[column] = " / ".join(dict.fromkeys(shown))
    return text.format(**said)


def _header_words(label: str, lang: str) -> str:
    joined = label.replace("\n", "" if lang == "zh" else " ")
    return joined[:1].upper() + joined[1:]


LABELS = {"en": ("In the story", "Meaning", "On screen"), "zh": ("故事里", "意思", "屏幕上")}


def idea_texts(lang: str) -> list[tuple[str, str, str, str, str]]:
    """Per idea: its name, its name in the other language, story, meaning, where it shows."""
    zh = lang == "zh"
    other = "en" if zh else "zh"
    out = []
    for idea, story, meaning, where in IDEAS:
        story_text = glossary.story_word(story, lang)
        if not zh:  # the seed's own word beside the English, e.g. "租牌 — the lease tag"
            story_text = f"{glossary.story_word(story, 'zh')} — {story_text}"
        out.append(
            (
                glossary.concept_word(idea, lang),
                glossary.concept_word(idea, other),
                story_text,
                _fill(meaning, lang),
                _fill(where, lang),
            )
        )
    return out


def help_renderable(lang: str, width: int = 100) -> Text:
    """The five ideas, each a block: its names, then story, meaning and place on screen.

    Wrapped here, not by Rich: Rich breaks Chinese at any character, which put a lone
    "。" or "，" at the start of a line and split words like 租约号 across two.
    """
    zh = lang == "zh"
    label_w = max(cell_len(label) for label in LABELS[lang]) + 2
    text_w = max(20, width - label_w - 2)
    text = Text()
    text.append(("五个概念" if zh else "The five ideas") + "\n", style="bold underline")
    for name, other_name, story, meaning, where in idea_texts(lang):
        text.append("\n")
        text.append(name, style="bold")
        text.append("  ")
        text.append(other_name, style="dim")
        text.append("\n")
        for label, value, style in zip(
            LABELS[lang], (story, meaning, where), ("italic", "", "cyan"), strict=True
        ):
            for n, line in enumerate(wrap(value, text_w)):
                head = label if n == 0 else ""
                text.append("  " + head + " " * (label_w - cell_len(head)), style="dim")
                text.append(line + "\n", style=style)
    for title, lines in LESSONS:
        text.append("\n" + glossary.pick(title, lang) + "\n", style="bold underline")
        for prose in lines:
            for n, line in enumerate(wrap(_fill(prose, lang), width - 4)):
                text.append(("  · " if n == 0 else "    ") + line + "\n")
    return text


class HelpScreen(ModalScreen[None]):
    """Esc, ? or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", tooltip="Back", id="help.close"),
        Binding("l", "language", "中文 / English", id="help.language"),
    ]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static("", id="help-table")
            yield Static(hint_text(self.lang), id="help-hint")
            yield Static(keys_text(self.lang), id="help-keys")

    def on_resize(self) -> None:
        self._write_ideas()

    def _write_ideas(self) -> None:
        table = self.query_one("#help-table", Static)
        # less two cells: the page scrolls, and its scrollbar must not cover the text
        width = (table.size.width or max(40, self.size.width * 9 // 10 - 4)) - 2
        table.update(help_renderable(self.lang, width))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_language(self) -> None:
        """`l` works here too: the whole app switches, and this page is written again."""
        app = self.app
        lang = "en" if self.lang == "zh" else "zh"
        if hasattr(app, "lang"):
            app.lang = lang
        self.lang = lang
        self._write_ideas()
        self.query_one("#help-hint", Static).update(hint_text(lang))
        self.query_one("#help-keys", Static).update(keys_text(lang))


def hint_text(lang: str) -> str:
    return "Esc / ? 关闭本页 · l English" if lang == "zh" else "Esc or ? closes this page · l 中文"


def keys_text(lang: str) -> Table:
    """Every key and what it does: a line that wraps goes on under its own text, not under
    the keys."""
    from demo.controls import help_lines  # the table the main screen binds

    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for line in help_lines():
        table.add_row(line.keys, line.zh if lang == "zh" else line.en)
    return table
