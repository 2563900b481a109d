"""What a scenario file becomes (`Scenario`, its steps, questions and expectations), the
names and limits of the format, and how values are spelled in messages."""

import difflib
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import tomli_w

from core.engine import ids
from core.engine.durations import format_duration
from core.engine.errors import BorrowedKeysError, RejectReason
from core.engine.vocabulary import TaskStatus
from core.scenarios.glossary import file_mistake, type_word
from core.sim.checker import ViolationKind
from core.sim.spec import Action, SimSettings, WorkerState

# -- the vocabulary ------------------------------------------------------------------------

# The keys of each table come from the schema's models (`keys_of`), so they are written once.
# The names an expectation may use, in the enums' order (error messages list them so).
TASK_STATUSES: Final = tuple(s.value for s in TaskStatus)
WORKER_STATES: Final = tuple(s.value for s in WorkerState)
REJECT_REASONS: Final = tuple(r.value for r in RejectReason)
VIOLATIONS: Final = tuple(v.value for v in ViolationKind)
METRICS: Final = ("wasted_steps", "recovery_time")

# -- limits: a scenario is a lesson, not a load test; absurd sizes are errors, never hangs --

MAX_FILE_BYTES: Final = 1_000_000
MAX_WORKERS: Final = 100
MAX_TASKS: Final = 1000
MAX_TASK_STEPS: Final = 1000
MAX_ATTEMPTS: Final = 100
MAX_PLAYBACK_STEPS: Final = 10_000
MAX_DURATION_MS: Final = 86_400_000  # one day, for every single duration
MAX_TOTAL_STEPS: Final = 100_000  # task steps summed over all tasks
MAX_WAKEUPS: Final = 2_000_000  # estimated worker wake-ups (polls + heartbeats) in a run
MAX_FACTOR: Final = 1000.0
MAX_SEED: Final = 2**63
MAX_ID_LENGTH: Final = ids.MAX_ID_LENGTH  # the store's own bound
MIN_CHOICES: Final = 2
MAX_CHOICES: Final = 4
MAX_CHOICE_LENGTH: Final = 80


class ScenarioError(BorrowedKeysError):
    """A scenario file that cannot be played. str() is `FILE:LINE: message`."""

    def __init__(
        self, path: str, line: int | None, message: str, message_zh: str | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.message = message
        self.message_zh = message_zh  # the same mistake in Chinese, where it is known
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")

    def in_language(self, lang: str) -> str:
        """`FILE:LINE: message` in `lang` (English where no Chinese is known)."""
        if lang != "zh" or self.message_zh is None:
            return str(self)
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message_zh}"  # `FILE:LINE:` as editors and grep read it


# -- what a file becomes ---------------------------------------------------------------------

ExpectValue = str | int


class Panel(enum.StrEnum):
    """The main screen's panels, in the order of keys 1-6: what a step may name as the one
    it is about (`panel = "timeline"`)."""

    LEDGER = "ledger"
    CHECKPOINTS = "checkpoints"
    REJECTED = "rejected"
    EFFECTS = "effects"
    EVENTS = "events"
    TIMELINE = "timeline"

    @property
    def tab(self) -> str:
        """The id of its tab on the main screen."""
        return f"tab-{self.value}"


PANELS: Final = tuple(p.value for p in Panel)


class Subject(enum.StrEnum):
    """What an expectation is about: the key that names it in its inline table."""

    TASK = "task"
    WORKER = "worker"
    LEDGER = "ledger"
    REJECTED = "rejected"
    EFFECT = "effect"
    VIOLATION = "violation"
    METRIC = "metric"


@dataclass(frozen=True, slots=True)
class Expectation:
    """One inline table of `expect`: a subject and the keys that must match.

    `subject` says what it is about, and `value` is what that key names (a task id, a
    ledger key, a reason or "any", ...).
    `params` holds the other keys in file order; recovery_time's min and max and a task's
    expires_at and renew_deadline are in ms.
    """

    subject: Subject
    value: str
    params: tuple[tuple[str, ExpectValue], ...] = ()
    line: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        # A subject spelled as its word (as the file has it) is the same subject.
        object.__setattr__(self, "subject", Subject(self.subject))

    def get(self, key: str) -> ExpectValue | None:
        return next((v for k, v in self.params if k == key), None)

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.params)

    def items(self) -> tuple[tuple[str, ExpectValue], ...]:
        """Every key of the table, the subject first, as the file spells it."""
        return ((self.subject.value, self.value), *self.params)

    def to_dict(self) -> dict[str, ExpectValue]:
        """The inline table as the file spells it (recovery_time's bounds as durations, a
        task's instants as durations since the start)."""
        timed = self.subject is Subject.METRIC and self.value == "recovery_time"
        out: dict[str, ExpectValue] = {}
        for k, v in self.items():
            if timed and k in ("min", "max") and isinstance(v, int):
                v = format_duration(v)
            elif self.subject is Subject.TASK and k in TIME_KEYS and isinstance(v, int):
                v = instant_text(v)
            out[k] = v
        return out

    def to_toml(self) -> str:
        """The expectation as an inline TOML table, e.g. `{ task = "t1", status = "done" }`."""
        parts = [f"{k} = {toml_value(v)}" for k, v in self.to_dict().items()]
        return "{ " + ", ".join(parts) + " }"


def _in(lang: str, en: str | None, zh: str | None) -> str | None:
    """The text in `lang`, falling back to the other language."""
    if lang == "zh":
        return zh if zh is not None else en
    return en if en is not None else zh


@dataclass(frozen=True, slots=True)
class Question:
    """A question for the audience, asked before the step's outcome is shown.

    `answer` is the number of the right choice counting from 1, as the choices are shown;
    a question without choices is an open one, and `why` is what the presenter reveals.
    """

    ask: str | None = None
    ask_zh: str | None = None
    choices: tuple[str, ...] = ()
    choices_zh: tuple[str, ...] = ()
    answer: int | None = None
    why: str | None = None
    why_zh: str | None = None
    # The pushback a good interviewer gives once the first answer is in, asked the same way.
    follow_up: "Question | None" = None

    def text(self, lang: str = "en") -> str:
        return _in(lang, self.ask, self.ask_zh) or ""

    def choices_in(self, lang: str = "en") -> tuple[str, ...]:
        return self.choices_zh if lang == "zh" and self.choices_zh else self.choices

    def why_in(self, lang: str = "en") -> str | None:
        return _in(lang, self.why, self.why_zh)

    def right_choice(self, lang: str = "en") -> str | None:
        shown = self.choices_in(lang)
        return shown[self.answer - 1] if self.answer is not None and shown else None

    def is_right(self, chosen: int) -> bool:
        """Whether choice `chosen` (counting from 1) is the right one."""
        return self.answer is not None and chosen == self.answer


@dataclass(frozen=True, slots=True)
class Step:
    """One playback step: narration, at most one action, and expectations checked after it.

    A step with a `question` is asked before it is played (the app pauses on it)."""

    say: str | None = None
    say_zh: str | None = None
    action: Action | None = None
    expects: tuple[Expectation, ...] = ()
    question: Question | None = None
    panel: Panel | None = None  # the panel it is about, when the file names it
    line: int = field(default=0, compare=False)  # where its [[step]] header is
    action_line: int | None = field(default=None, compare=False)  # where its `do` is

    def narration(self, lang: str = "en") -> str | None:
        """The narration in `lang`, falling back to the other language."""
        return _in(lang, self.say, self.say_zh)


@dataclass(frozen=True, slots=True)
class TimingNote:
    """A timing rule of thumb the file breaks (the heartbeat slower than half the ttl): the
    scenario still runs, and the player and the app say so, on the line it is told."""

    line: int
    heartbeat_ms: int
    ttl_ms: int


@dataclass(frozen=True, slots=True)
class Scenario:
    """A parsed scenario file."""

    path: str
    title: str
    title_zh: str | None = None
    summary: str | None = None
    summary_zh: str | None = None
    settings: SimSettings = field(default_factory=SimSettings)
    steps: tuple[Step, ...] = ()
    warnings: tuple[str, ...] = ()  # full one-line texts: `FILE:LINE: warning: ...`
    timing_notes: tuple[TimingNote, ...] = ()  # the same warnings, for any language

    def title_in(self, lang: str = "en") -> str:
        return self.title_zh if lang == "zh" and self.title_zh else self.title

    def summary_in(self, lang: str = "en") -> str | None:
        if lang == "zh" and self.summary_zh:
            return self.summary_zh
        return self.summary


# Task keys that hold an instant of virtual time (a duration since the start; "" = none).
TIME_KEYS: Final = ("expires_at", "renew_deadline", "last_heartbeat_at")


def instant_text(ms: int) -> str:
    """A virtual instant as a duration since the start, in seconds when whole: "80s", not
    "1m20s", so it reads like the narration's "at 80 s"."""
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def toml_value(value: str | int | float | bool) -> str:
    """A value as TOML spells it. tomli-w does the spelling (escapes, floats, inf and nan), so
    the writer, the transcript and the error messages all spell values one way."""
    return tomli_w.dumps({"v": value}).removeprefix("v = ").removesuffix("\n")


def suggest(key: str, valid: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def said(name: str, /, **fill: object) -> tuple[str, str]:
    """A file mistake from the glossary's table, in English and in Chinese."""
    return file_mistake(name, "en", **fill), file_mistake(name, "zh", **fill)


def suggest_word(key: str, valid: Sequence[str], lang: str) -> str:
    """`suggest` in `lang`: the nearest valid name, asked about, or nothing."""
    close = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.6)
    return file_mistake("did_you_mean", lang, close=close[0]) if close else ""


def type_name(value: object) -> str:
    return type_word(value, "en")


def show(value: object) -> str:
    if isinstance(value, str):
        return toml_value(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return type_name(value)
