"""The help page: the five ideas, each beside its counterpart in the story."""

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core.scenarios import glossary
from demo.widgets.cjk_wrap import wrap

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
            "Every new holder gets a higher number; the ledger, in the same database as the "
            "leases, takes a page only from the current, live lease with the task's newest "
            "fence token. A system outside can only refuse numbers below the highest it has seen.",
            "每换一位持有者，编号就更大；总册和租约同在一个数据库里，只收当前有效租约、带着最新"
            "围栏令牌的页，编号落后的一律拒收。数据库之外的系统只能记住见过的最大编号，拒收更小的。",
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


def _fill(prose: Prose, lang: str) -> str:
    """The prose in `lang`, its `{name}`s replaced by the glossary's words."""
    text = glossary.pick(prose, lang)
    words = {**glossary.CONCEPTS, **glossary.COLUMNS, **glossary.PANELS}
    words["freeze_heartbeat"] = ("Freeze heartbeat", glossary.ACTIONS["freeze_heartbeat"][1])
    return text.format(**{k: glossary.pick(v, lang) for k, v in words.items()})


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
    "。" or "，" at the start of a line and split words like 租约令牌 across two.
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


def keys_text(lang: str) -> Text:
    from demo.controls import help_lines  # the table the main screen binds

    text = Text()
    for line in help_lines():
        text.append(f"{line.keys:<14}", style="bold")
        text.append((line.zh if lang == "zh" else line.en) + "\n")
    return text
