"""The help page: the five ideas, each beside its counterpart in the story."""

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

# (idea, story, what it means, where it shows) in (en, zh)
IDEAS: tuple[tuple[tuple[str, str], tuple[str, str], tuple[str, str], tuple[str, str]], ...] = (
    (
        ("Lease", "租约"),
        ("租牌 — the lease tag", "租牌"),
        (
            "Ownership with an end: owner, lease_token, expires_at, judged by the store's clock.",
            "有期限的所有权：持有者、租约令牌、到期时刻，由存储的时钟裁定。",
        ),
        (
            "Task table (owner, lease_token, Expires in); each worker pane's bar.",
            "任务表（持有者、租约令牌、剩余租期）；每个工作者面板里的进度条。",
        ),
    ),
    (
        ("Heartbeat", "心跳续约"),
        ("续沙 — renewing the sand, “I'm still here”", "续沙，“我还在”"),
        (
            "The holder renews before the sand runs out, on its own path, apart from the work.",
            "持有者在沙漏流尽之前续约，走自己的路，与干活分开。",
        ),
        (
            "Pane pulse (♥ age), last heartbeat column; Freeze heartbeat stops it.",
            "面板上的脉搏（♥ 多久前），任务表的上次心跳；冻结心跳让它停下。",
        ),
    ),
    (
        ("Fencing token", "围栏令牌"),
        ("围栏签 — the fence tag, a number that only grows", "围栏签（只增不减的编号）"),
        (
            "Every new holder gets a higher number; the ledger refuses pages with a lower one.",
            "每换一位持有者编号就更大；总册拒收编号更小的页。",
        ),
        (
            "fence_token column, Ledger tab, Rejected tab (its token against the current one).",
            "围栏令牌一列、总册页签、拒收页签（它的令牌对比当前令牌）。",
        ),
    ),
    (
        ("Checkpoint", "检查点"),
        ("暂存木匣 — the numbered box on the shelf by the stairs", "暂存木匣，暂存架"),
        (
            "Progress saved under the fence token, so a successor resumes instead of restarting.",
            "在围栏令牌之下保存进度，接手的人从中断处继续，而不是从头再来。",
        ),
        ("Checkpoints tab; checkpoint step column.", "检查点页签；任务表的检查点步。"),
    ),
    (
        ("Idempotency", "幂等"),
        (
            "the ledger that refuses stale pages — and never pays twice",
            "拒收旧页、不会付两次钱的总册",
        ),
        (
            "A side effect carries a key; a repeat is deduplicated, not applied again.",
            "副作用带着幂等键；重复的一次被去重，而不是再执行一遍。",
        ),
        ("Effects tab: applied against deduplicated.", "副作用页签：已执行对比已去重。"),
    ),
)


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
    for idea, story, meaning, where in IDEAS:
        i = 1 if zh else 0
        other = 0 if zh else 1
        # fold: Chinese has no spaces to wrap at, so a cell would be cut off with "…"
        table.add_row(
            Text(f"{idea[i]}\n{idea[other]}", style="bold", overflow="fold"),
            Text(story[i], style="italic", overflow="fold"),
            Text(meaning[i], overflow="fold"),
            Text(where[i], style="cyan", overflow="fold"),
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
    from demo.controls import CONTROL_KEYS  # the table the main screen binds

    text = Text()
    for keys, en, zh_text in CONTROL_KEYS:
        text.append(f"{keys:<14}", style="bold")
        text.append((zh_text if lang == "zh" else en) + "\n")
    return text
