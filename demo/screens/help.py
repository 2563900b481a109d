"""The help page: the five ideas, each beside its counterpart in the story."""

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core.scenarios import glossary

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
            "有期限的所有权：持有者、{lease_token}、到期时刻，由存储的时钟裁定。",
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
            "持有者在沙漏流尽之前续约，走自己的路，与干活分开。",
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
            "Every new holder gets a higher number; the ledger takes a page only from the "
            "current, live lease with the task's newest fence token.",
            "每换一位持有者，编号就更大；总册只收当前有效租约、带着最新围栏令牌的页，"
            "编号落后的一律拒收。",
        ),
        (
            "{fence_token} column, {ledger} tab, {rejected} tab ({its_token} against the "
            "{current_token} one).",
            "任务表的{fence_token}、{ledger}页签、{rejected}页签（{its_token}对比{current_token}）。",
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
            "A side effect carries a key; a repeat is deduplicated, not applied again.",
            "副作用带着幂等键；重复的一次被去重，而不是再执行一遍。",
        ),
        (
            "{effects} tab: {effect_applied} against {effect_deduplicated}.",
            "{effects}页签：{effect_applied}对比{effect_deduplicated}。",
        ),
    ),
)


def _fill(prose: Prose, lang: str) -> str:
    """The prose in `lang`, its `{name}`s replaced by the glossary's words."""
    text = glossary.pick(prose, lang)
    words = {**glossary.CONCEPTS, **glossary.COLUMNS, **glossary.PANELS}
    words["freeze_heartbeat"] = ("Freeze heartbeat", glossary.ACTIONS["freeze_heartbeat"][1])
    return text.format(**{k: glossary.pick(v, lang) for k, v in words.items()})


def help_renderable(lang: str) -> Table:
    zh = lang == "zh"
    table = Table(expand=True, show_lines=True, title=("五个概念" if zh else "The five ideas"))
    headers = (
        ("概念", "故事里", "意思", "屏幕上")
        if zh
        else ("Idea", "In the story", "Meaning", "On screen")
    )
    for h in headers:
        table.add_column(h, ratio=1 if h in ("Idea", "概念") else 2)
    other = "en" if zh else "zh"
    for idea, story, meaning, where in IDEAS:
        story_text = glossary.story_word(story, lang)
        if not zh:  # the seed's own word beside the English, e.g. "租牌 — the lease tag"
            story_text = f"{glossary.story_word(story, 'zh')} — {story_text}"
        # fold: Chinese has no spaces to wrap at, so a cell would be cut off with "…"
        table.add_row(
            Text(
                f"{glossary.concept_word(idea, lang)}\n{glossary.concept_word(idea, other)}",
                style="bold",
                overflow="fold",
            ),
            Text(story_text, style="italic", overflow="fold"),
            Text(_fill(meaning, lang), overflow="fold"),
            Text(_fill(where, lang), style="cyan", overflow="fold"),
        )
    return table


class HelpScreen(ModalScreen[None]):
    """Esc, ? or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", tooltip="Back", id="help.close"),
    ]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(help_renderable(self.lang), id="help-table")
            yield Static(
                "Esc / ? 关闭本页。" if self.lang == "zh" else "Esc or ? closes this page.",
                id="help-hint",
            )
            yield Static(keys_text(self.lang), id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)


def keys_text(lang: str) -> Text:
    from demo.screens.main import CONTROL_KEYS  # the table the main screen binds

    text = Text()
    for keys, en, zh_text in CONTROL_KEYS:
        text.append(f"{keys:<14}", style="bold")
        text.append((zh_text if lang == "zh" else en) + "\n")
    return text
