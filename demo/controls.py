"""Every control of the main screen, one row each: its keys, action, words, tip, where it
shows (key bar, button bar, palette) and its line on the help page.

The screen's bindings, its buttons, its key bar, the command palette (`demo.commands`) and
the help page's keys table are all derived from `CONTROLS`; a new control is one row here.
The faults a worker offers, in its pane and in the palette, are derived from `FAULTS` the
same way. Its own module, so the screens, the palette and the help page can all import it
without importing one another.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from textual.binding import Binding

from core.fleet.faults import FAULT_ACT, FaultAct
from core.scenarios import glossary
from core.scenarios.format.model import MAX_CHOICES
from demo.i18n import tr


class Moment(Enum):
    """What the run waits for; a control that answers it goes first in the button bar."""

    TASK_WAITS = "task_waits"  # a task waits for a person's approval
    QUESTION = "question"  # a step's question waits to be revealed


@dataclass(frozen=True, slots=True)
class Hint:
    """A control's item in the key bar: the key as shown, its word, its priority (lower
    stays when the bar is short)."""

    key: str
    word: str
    priority: int


@dataclass(frozen=True, slots=True)
class HelpLine:
    """A control's line on the help page: the keys as typed, what they do (en, zh)."""

    keys: str
    en: str
    zh: str


@dataclass(frozen=True, slots=True)
class Control:
    """One control: a key binding, maybe a button, a key-bar item, a palette entry."""

    id: str
    keys: str  # Textual key names, comma-separated; "" = no binding of the screen's own
    action: str  # the screen's action ("next_step", "show_tab('tab-ledger')", "app.…")
    word: str  # word key of its label
    tip: str  # word key of its tooltip
    hint: Hint | None = None
    button: int | None = None  # button-bar priority (lower first); None: no button
    moment: Moment | None = None  # in this moment the button goes first
    only_in_moment: bool = False  # the button shows in its moment only
    palette: str | None = "{word}  [{key}]"  # the palette title (word key or a form), or None
    help: HelpLine | None = None

    @property
    def button_id(self) -> str:
        return f"btn-{self.id}"

    @property
    def first_key(self) -> str:
        """The first key as a person types it ("?", "-", "+")."""
        key = self.keys.split(",")[0]
        return KEY_SHOWN.get(key, key)

    def palette_title(self, lang: str) -> str:
        assert self.palette is not None
        form = tr(self.palette, lang, panel=tr(self.word, lang)) if "{" not in self.palette else ""
        return form or self.palette.format(word=tr(self.word, lang), key=self.first_key)


KEY_SHOWN = {"question_mark": "?", "minus": "-", "plus": "+", "space": "space", "full_stop": "."}


class WorkerIs(Enum):
    """A worker's moment that changes which faults it offers."""

    DEAD = "dead"
    PARTITIONED = "partitioned"


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault, for the simulated app and the fleet alike: its key on the chosen worker,
    its word in the pane (clickable), its tooltip, its palette entry. What the fleet does
    to a real process for it is its row in the table below both apps (`act`)."""

    action: str  # its key in `WORKER_ACTIONS` (the simulation's act) and in `FAULT_ACT`
    key: str  # the key that does it on the chosen worker (`w`); a pair shares one
    word: str  # word key of its label
    line: int  # which of the pane's two lines of fault words it sits on
    done: str  # word key of what the fleet says once it is done
    tip: str = "tip_fault"  # word key of its tooltip
    # shown only in this moment, in the place of `instead_of`; a dead worker's pane keeps
    # the others, dim, and only the fault shown for the dead acts
    only_when: WorkerIs | None = None
    instead_of: str | None = None
    danger: bool = False  # drawn in red in the pane

    @property
    def act(self) -> FaultAct:
        """The fault as the fleet does it: the `Fleet` method, whether it needs a relay."""
        return FAULT_ACT[self.action]


# The one table of faults, in the order the pane shows them and the palette lists them.
# A fault's key acts on the chosen worker (`w`): the same act as its word in the pane.
# `u` resumes a frozen or stalled worker and restarts a dead one; `c` cuts the network
# (partition) or heals it, whichever the worker is in.
FAULTS: tuple[Fault, ...] = (
    Fault("freeze_heartbeat", "h", "freeze_heartbeat", 0, "fleet_frozen"),
    Fault("stall", "z", "stall", 0, "fleet_stalled"),
    Fault("kill", "k", "kill", 1, "fleet_killed", danger=True),
    Fault("resume", "u", "resume", 1, "fleet_resumed"),
    Fault(
        "restart",
        "u",
        "restart_worker",
        1,
        "fleet_restarted",
        only_when=WorkerIs.DEAD,
        instead_of="resume",
    ),
    Fault("partition", "c", "partition", 1, "fleet_partitioned"),
    Fault(
        "heal",
        "c",
        "heal",
        1,
        "fleet_healed",
        only_when=WorkerIs.PARTITIONED,
        instead_of="partition",
    ),
)
FAULT_BY_ACTION = {f.action: f for f in FAULTS}
# The keys, one a pair: (the fault the key names, its key, its word).
FAULT_KEYS: tuple[tuple[str, str, str], ...] = tuple(
    (f.action, f.key, f.word) for f in FAULTS if f.only_when is None
)
FAULT_KEY = {f.action: f.key for f in FAULTS}
FAULT_HELP = HelpLine(
    "h  z  k  u  c",
    "on the chosen worker: freeze heartbeat, stall, kill, resume / restart, partition / heal",
    "对选定的执行者：冻结心跳、停顿、杀死、恢复 / 重启、断桥 / 修桥",
)


def worker_faults(*, dead: bool, partitioned: bool) -> list[tuple[Fault, bool]]:
    """The faults a worker's pane shows now, each with whether it acts (the palette lists
    those that act)."""
    now = {WorkerIs.DEAD: dead, WorkerIs.PARTITIONED: partitioned}
    replaced = {f.instead_of for f in FAULTS if f.only_when is not None and now[f.only_when]}
    return [
        (f, (f.only_when == WorkerIs.DEAD) == dead)
        for f in FAULTS
        if f.action not in replaced and (f.only_when is None or now[f.only_when])
    ]


def fault_now(action: str, *, dead: bool, partitioned: bool) -> Fault:
    """What a fault's key does to a worker now: `u` restarts a dead worker and resumes a
    living one; `c` heals a cut network, or cuts it."""
    for f, _acts in worker_faults(dead=dead, partitioned=partitioned):
        if f.action == action or f.instead_of == action:
            return f
    return FAULT_BY_ACTION[action]


def fault_bindings(lang: str) -> list[Binding]:
    """`w` and the fault keys as a screen's bindings, labelled and tipped in `lang`."""
    worker = by_id("worker")
    return [
        Binding(
            worker.keys,
            worker.action,
            tr(worker.word, lang),
            tooltip=tr(worker.tip, lang),
            id=worker.id,
        ),
        *(
            Binding(
                f.key,
                f"fault('{f.action}')",
                tr(f.word, lang),
                tooltip=tr(f.tip, lang),
                id=f"fault.{f.action}",
            )
            for f in FAULTS
            if f.only_when is None
        ),
    ]


_PANELS = "1 … 6"
# Each panel tab is a control (keys 1-6); the first carries the key bar's and help's line.
_TABS = (
    ("ledger", "1", "tab-ledger", "ledger"),
    ("checkpoints", "2", "tab-checkpoints", "checkpoints"),
    ("rejected", "3", "tab-rejected", "rejected"),
    ("effects", "4", "tab-effects", "effects"),
    ("events", "5", "tab-events", "event_log"),
    ("timeline", "6", "tab-timeline", "timeline"),
)

CONTROLS: tuple[Control, ...] = (
    Control(
        "add_worker",
        "",
        "add_worker",
        "add_worker",
        "tip_add_worker",
        button=9,
        palette="{word}",
    ),
    Control(
        "play",
        "space",
        "play_pause",
        "play_pause",
        "tip_play",
        hint=Hint("␣", "play_pause", 2),
        button=2,
        help=HelpLine("space", "play / pause", "播放 / 暂停"),
    ),
    Control(
        "previous",
        "p,left",
        "previous_step",
        "previous",
        "tip_previous",
        hint=Hint("p", "previous", 1),
        button=1,
        help=HelpLine(
            "p  ←  PgUp",
            "previous step (sandbox and after a fork: undo the last act, 100 in a row at most)",
            "上一步（沙盒里和分叉之后：撤销上一个动作，最多连续 100 个）",
        ),
    ),
    Control(
        "redo",
        "y",
        "redo",
        "redo",
        "tip_redo",
        help=HelpLine(
            "y",
            "redo: bring back what p undid (the act and the time after it)",
            "重做：把 p 撤销的动作（连同之后的时间）找回来",
        ),
    ),
    Control(
        "next",
        "n,right",
        "next_step",
        "next",
        "tip_next",
        hint=Hint("n", "next", 0),
        button=0,
        help=HelpLine("n  →  PgDn", "next step", "下一步"),
    ),
    Control(
        "reveal",
        "v",
        "reveal",
        "reveal",
        "tip_reveal",
        button=0,
        moment=Moment.QUESTION,
        only_in_moment=True,
        help=HelpLine("v", "reveal the answer to the step's question", "揭晓本步问题的答案"),
    ),
    Control(
        "toml",
        "t",
        "toggle_toml",
        "toml_form",
        "tip_toml",
        help=HelpLine(
            "t",
            "expectations: as sentences / as the file spells them",
            "预期：显示成句子 / 按文件的写法",
        ),
    ),
    Control(
        "jump",
        "g",
        "jump",
        "jump",
        "tip_jump",
        hint=Hint("g", "jump", 11),
        help=HelpLine(
            "g", "go to a step: type its number, then Enter", "跳到某一步：输入步数再回车"
        ),
    ),
    Control(
        "restart",
        "r",
        "restart",
        "restart",
        "tip_restart",
        hint=Hint("r", "restart", 5),
        button=3,
        help=HelpLine("r", "restart", "重来"),
    ),
    Control(
        "slower",
        "minus",
        "slower",
        "slower",
        "tip_speed",
        hint=Hint("-/+", "speed_word", 8),
        button=8,
        help=HelpLine("-  +", "slower / faster", "慢一点 / 快一点"),
    ),
    Control("faster", "plus,equals_sign", "faster", "faster", "tip_speed", button=7),
    Control(
        "language",
        "l",
        "language",
        "language",
        "tip_lang",
        hint=Hint("l", "language", 6),
        button=4,
        help=HelpLine("l", "language: English / 中文", "语言：English / 中文"),
    ),
    Control(
        "mode",
        "m",
        "choose_mode",
        "mode_next",
        "tip_mode",
        hint=Hint("m", "mode_next", 9),
        button=6,
        help=HelpLine(
            "m",
            "mode: choose one from a list; the run stays at its step",
            "模式：从列表里选一种；这一局停在原来那一步",
        ),
    ),
    Control(
        "open",
        "o",
        "open_scenario",
        "open_scenario",
        "tip_open_scenario",
        hint=Hint("o", "open_scenario", 12),
        help=HelpLine(
            "o",
            "open another scenario (the picker; Esc comes back)",
            "打开另一个场景（场景列表；Esc 返回）",
        ),
    ),
    Control(
        "narration",
        "d",
        "toggle_narration",
        "narration_fold",
        "tip_narration_fold",
        help=HelpLine(
            "d",
            "narration: open the whole step / fold it to its first lines",
            "旁白：展开整步 / 折回前几行",
        ),
    ),
    Control(
        "worker",
        "w",
        "choose_worker",
        "choose_worker",
        "tip_choose_worker",
        hint=Hint("w", "choose_worker", 13),
        help=HelpLine(
            "w",
            "choose the worker the fault keys act on (its pane's name is highlighted)",
            "选定故障键作用的执行者（它的面板名字高亮）",
        ),
    ),
    *(
        Control(
            f"fault.{f.action}",
            f.key,
            f"fault('{f.action}')",
            f.word,
            f.tip,
            palette=None,  # the palette names each fault on each worker
            help=FAULT_HELP if f is FAULTS[0] else None,
        )
        for f in FAULTS
        if f.only_when is None
    ),
    Control(
        "approve",
        "a",
        "approve",
        "approve",
        "tip_approve",
        button=10,
        moment=Moment.TASK_WAITS,
        help=HelpLine(
            "a  x", "approve / reject the selected waiting task", "批准 / 驳回选中的待批任务"
        ),
    ),
    Control("reject", "x", "reject", "reject", "tip_reject", button=11, moment=Moment.TASK_WAITS),
    Control(
        "enqueue",
        "e",
        "enqueue",
        "enqueue",
        "tip_enqueue",
        button=12,
        moment=Moment.TASK_WAITS,
        help=HelpLine("e", "enqueue a task", "任务入队"),
    ),
    Control(
        "filter",
        "f",
        "filter_rejected",
        "filter",
        "tip_filter",
        help=HelpLine(
            "f",
            "Rejected panel: show one reason, the next, all",
            "拒收面板：只看一种原因，下一种，全部",
        ),
    ),
    Control(
        "save",
        "s",
        "save",
        "save",
        "tip_save",
        hint=Hint("s", "save", 10),
        button=13,
        help=HelpLine(
            "s",
            "save transcript, screenshot, scenario (borrowed-keys-out/)",
            "保存回放记录、截图、场景（borrowed-keys-out/）",
        ),
    ),
    Control(
        "remote.pause",
        "full_stop",
        "pause",
        "pause",
        "tip_pause",
        palette=None,
        help=HelpLine(".", "pause (presentation remote)", "暂停（演示遥控器）"),
    ),
    Control("remote.next", "pagedown", "next_step", "next", "tip_next", palette=None),
    Control("remote.previous", "pageup", "previous_step", "previous", "tip_previous", palette=None),
    # Interview mode: at a question, 1-4 answer it (then its follow-up); otherwise they open
    # the panels, as below. Rows before the tabs': the screen tries the answer first.
    *(
        Control(
            f"answer.{n}",
            str(n),
            f"answer({n})",
            "answer_keys",
            "tip_interview",
            palette=None,
            help=(
                HelpLine(
                    "1 … 4",
                    "interview mode, at a question: answer it by its number, then the follow-up",
                    "面试模式下遇到问题：按编号作答，再答追问",
                )
                if n == 1
                else None
            ),
        )
        for n in range(1, MAX_CHOICES + 1)
    ),
    Control(
        "guess",
        "G",
        "guess",
        "guess",
        "tip_guess",
        palette=None,
        help=HelpLine(
            "G",
            "with --guess-mode: say which of the five mistakes the run is under",
            "用 --guess-mode 打开时：说出这一局是五个误区里的哪一个",
        ),
    ),
    Control(
        "interview",
        "i",
        "toggle_interview",
        "interview",
        "tip_interview",
        help=HelpLine("i", "interview mode on / off", "面试模式：开 / 关"),
    ),
    *(
        Control(
            f"tab.{name}",
            key,
            f"show_tab('{pane}')",
            word,
            "tip_tab",
            palette="palette_panel",
            hint=Hint("1-6", "panels", 4) if key == "1" else None,
            help=(
                HelpLine(
                    _PANELS,
                    "panels: " + ", ".join(en.lower() for en, _zh in glossary.PANELS.values()),
                    "面板：" + "、".join(zh for _en, zh in glossary.PANELS.values()),
                )
                if key == "1"
                else None
            ),
        )
        for name, key, pane, word in _TABS
    ),
    Control(
        "workers",
        "0",
        "show_workers",
        "workers",
        "tip_workers",
        help=HelpLine("0", "back to the worker panes", "回到执行者面板"),
    ),
    Control(
        "palette",
        "",
        "app.command_palette",
        "palette",
        "tip_palette",
        hint=Hint("^p", "palette", 3),
        palette=None,
        help=HelpLine(
            "ctrl+p", "every act by name: faults on each worker, modes, tasks", "按名字找每个动作"
        ),
    ),
    Control(
        "help",
        "question_mark",
        "help",
        "help",
        "tip_help",
        hint=Hint("?", "help", 3),
        button=5,
        help=HelpLine("?", "help", "帮助"),
    ),
    Control(
        "quit",
        "q",
        "quit",
        "quit",
        "tip_quit",
        hint=Hint("q", "quit", 7),
        button=14,
        help=HelpLine("q", "quit", "退出"),
    ),
)

TABS: tuple[tuple[str, str], ...] = tuple((pane, word) for _name, _key, pane, word in _TABS)


def bindings(lang: str) -> list[Binding]:
    """The screen's key bindings, labelled in `lang`; each keeps its control's id."""
    return [
        Binding(
            c.keys,
            c.action,
            tr(c.word, lang),
            show=c.hint is not None or c.button is not None,
            tooltip=tr(c.tip, lang),
            id=c.id,
            priority=True,
            key_display="␣" if c.keys == "space" else None,
        )
        for c in CONTROLS
        if c.keys and not c.action.startswith("app.")
    ]


def buttons() -> Iterator[Control]:
    """The controls with a button, in the bar's order."""
    return (c for c in CONTROLS if c.button is not None)


def button_order(moments: frozenset[Moment]) -> list[Control]:
    """The buttons by priority now: those that answer the moment first, then the rest; a
    moment-only button is left out when its moment is not on."""
    shown = [c for c in buttons() if not c.only_in_moment or c.moment in moments]
    return sorted(shown, key=lambda c: (c.moment not in moments, c.button or 0))


def help_lines() -> Iterator[HelpLine]:
    return (c.help for c in CONTROLS if c.help is not None)


def by_id(control_id: str) -> Control:
    return next(c for c in CONTROLS if c.id == control_id)
