"""Scenario files: the public TOML format the player, the TUI and the fuzzer share.

A scenario is plain TOML read with the standard library's `tomllib`; nothing in it is ever
executed. `load_scenario` / `parse_scenario` turn a file into a `Scenario` (settings, workers,
tasks and playback steps) or raise `ScenarioError`, whose text is one line `FILE:LINE: what is
wrong`. The format is documented in docs/scenario-format.md and declared below as pydantic
models (one per table, action and expectation subject), which reject unknown keys.

tomllib gives no line numbers for values, so the line of a key is found by scanning the raw
text: the N-th `[[step]]` header, then the key inside that block, falling back to the
block's header line and then to line 1.
"""

import difflib
import math
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Final, Literal, get_args

import tomli_w
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Strict,
    StringConstraints,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from core.engine.config import LONG_LEASE_TTL_MS, LeaseConfig, Mode
from core.engine.durations import DurationError, format_duration, parse_duration
from core.engine.errors import BorrowedKeysError, RejectReason
from core.engine.vocabulary import TaskStatus
from core.sim.checker import ViolationKind
from core.sim.spec import (
    ACTION_TYPES,
    MANUAL_ACTIONS,
    TASK_KINDS,
    Action,
    AddWorker,
    Advance,
    Enqueue,
    SimSettings,
    TaskSpec,
    WorkerSpec,
    WorkerState,
)

# -- the vocabulary ------------------------------------------------------------------------

# The keys of each table come from the models below (`_keys`), so they are written once.
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
MAX_ID_LENGTH: Final = 200
MIN_CHOICES: Final = 2
MAX_CHOICES: Final = 4
MAX_CHOICE_LENGTH: Final = 80

DEFAULT_TTL_MS: Final = 60_000
DEFAULT_POLL_MS: Final = 5_000


class ScenarioError(BorrowedKeysError):
    """A scenario file that cannot be played. str() is `FILE:LINE: message`."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


# -- what a file becomes ---------------------------------------------------------------------

ExpectValue = str | int


@dataclass(frozen=True, slots=True)
class Expectation:
    """One inline table of `expect`: a subject and the keys that must match.

    `subject` is task | worker | ledger | rejected | effect | violation | metric, and
    `value` is what that key names (a task id, a ledger key, a reason or "any", ...).
    `params` holds the other keys in file order; recovery_time's min and max and a task's
    expires_at and renew_deadline are in ms.
    """

    subject: str
    value: str
    params: tuple[tuple[str, ExpectValue], ...] = ()
    line: int = field(default=0, compare=False)

    def get(self, key: str) -> ExpectValue | None:
        return next((v for k, v in self.params if k == key), None)

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.params)

    def items(self) -> tuple[tuple[str, ExpectValue], ...]:
        """Every key of the table, the subject first, as the file spells it."""
        return ((self.subject, self.value), *self.params)

    def to_dict(self) -> dict[str, ExpectValue]:
        """The inline table as the file spells it (recovery_time's bounds as durations, a
        task's instants as durations since the start)."""
        timed = self.subject == "metric" and self.value == "recovery_time"
        out: dict[str, ExpectValue] = {}
        for k, v in self.items():
            if timed and k in ("min", "max") and isinstance(v, int):
                v = format_duration(v)
            elif self.subject == "task" and k in TIME_KEYS and isinstance(v, int):
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

    def text(self, lang: str = "en") -> str:
        return _in(lang, self.ask, self.ask_zh) or ""

    def choices_in(self, lang: str = "en") -> tuple[str, ...]:
        return self.choices_zh if lang == "zh" and self.choices_zh else self.choices

    def why_in(self, lang: str = "en") -> str | None:
        return _in(lang, self.why, self.why_zh)

    def right_choice(self, lang: str = "en") -> str | None:
        shown = self.choices_in(lang)
        return shown[self.answer - 1] if self.answer is not None and shown else None


@dataclass(frozen=True, slots=True)
class Step:
    """One playback step: narration, at most one action, and expectations checked after it.

    A step with a `question` is asked before it is played (the app pauses on it)."""

    say: str | None = None
    say_zh: str | None = None
    action: Action | None = None
    expects: tuple[Expectation, ...] = ()
    question: Question | None = None
    line: int = field(default=0, compare=False)  # where its [[step]] header is
    action_line: int | None = field(default=None, compare=False)  # where its `do` is

    def narration(self, lang: str = "en") -> str | None:
        """The narration in `lang`, falling back to the other language."""
        return _in(lang, self.say, self.say_zh)


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

    def title_in(self, lang: str = "en") -> str:
        return self.title_zh if lang == "zh" and self.title_zh else self.title

    def summary_in(self, lang: str = "en") -> str | None:
        if lang == "zh" and self.summary_zh:
            return self.summary_zh
        return self.summary


# Task keys that hold an instant of virtual time (a duration since the start; "" = none).
TIME_KEYS: Final = ("expires_at", "renew_deadline")


def instant_text(ms: int) -> str:
    """A virtual instant as a duration since the start, in seconds when whole: "80s", not
    "1m20s", so it reads like the narration's "at 80 s"."""
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def toml_value(value: str | int | float | bool) -> str:
    """A value as TOML spells it. tomli-w does the spelling (escapes, floats, inf and nan), so
    the writer, the transcript and the error messages all spell values one way."""
    return tomli_w.dumps({"v": value}).removeprefix("v = ").removesuffix("\n")


# -- entry points ----------------------------------------------------------------------------


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario file; ScenarioError (one line) for anything wrong with it."""
    name = str(path)
    p = Path(path)
    try:
        if p.is_dir():
            raise ScenarioError(name, None, "cannot read: it is a directory, not a file")
        if not p.exists():
            raise ScenarioError(name, None, "cannot read: no such file")
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ScenarioError(
                name, None, f"file too large ({size} bytes; a scenario is at most 1 MB)"
            )
        data = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(name, None, f"cannot read: {exc.strerror or exc}") from None
    return parse_scenario(data, name)


def parse_scenario(text: str | bytes, path: str) -> Scenario:
    """Parse scenario text (bytes must be UTF-8); ScenarioError for anything wrong with it."""
    source = _decode(text, path)
    doc = _parse_toml(source, path)
    return _build(path, source, doc)


def _decode(text: str | bytes, path: str) -> str:
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise ScenarioError(path, None, "file too large (a scenario is at most 1 MB)")
        if text.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ScenarioError(path, 1, "not UTF-8 text (it is UTF-16); save the file as UTF-8")
        if b"\x00" in text:
            line = text[: text.index(b"\x00")].count(b"\n") + 1
            raise ScenarioError(path, line, "binary data (a NUL byte), not a TOML text")
        try:
            source = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text[: exc.start].count(b"\n") + 1
            bad = text[exc.start]
            raise ScenarioError(
                path, line, f"not UTF-8 text (byte 0x{bad:02x}); save the file as UTF-8"
            ) from None
    else:
        if len(text) > MAX_FILE_BYTES:
            raise ScenarioError(path, None, "file too large (a scenario is at most 1 MB)")
        source = text
        if "\x00" in source:
            line = source[: source.index("\x00")].count("\n") + 1
            raise ScenarioError(path, line, "binary data (a NUL character), not a TOML text")
        bad_at = next((i for i, ch in enumerate(source) if 0xD800 <= ord(ch) <= 0xDFFF), None)
        if bad_at is not None:
            line = source[:bad_at].count("\n") + 1
            raise ScenarioError(path, line, "not UTF-8 text (a lone surrogate)")
    if source.startswith("\ufeff"):
        source = source[1:]
    if not source.strip():
        raise ScenarioError(path, 1, "empty file: a scenario needs at least a title")
    return source


_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _parse_toml(source: str, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = source.count("\n") + 1
        at = _TOML_AT.search(message)
        if at:
            line = int(at.group(1))
            message = _TOML_AT.sub(f" (column {at.group(2)})", message)
        elif _TOML_END.search(message):
            message = _TOML_END.sub(" (at the end of the file)", message)
        message = message[:1].lower() + message[1:]
        raise ScenarioError(path, line, f"bad TOML: {message}") from None
    except RecursionError:
        raise ScenarioError(path, 1, "bad TOML: nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer with thousands of digits
        raise ScenarioError(path, 1, f"bad TOML: {exc}") from None


# -- finding lines in the raw text -----------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]#]*?)\s*\]\]?\s*(?:#.*)?$")


def _bare(key: str) -> str:
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'":
        return key[1:-1]
    return key


class _Lines:
    """Where blocks and keys are in the raw text (a heuristic; it never raises)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.total = max(1, len(self.lines))
        # (start line, end line exclusive, header name, is array, index among same name)
        self.blocks: list[tuple[int, int, str, bool, int]] = []
        counts: dict[tuple[str, bool], int] = {}
        starts: list[tuple[int, str, bool]] = []
        for number, text in enumerate(self.lines, start=1):
            match = _HEADER.match(text)
            if match:
                is_array = match.group(1) == "[["
                name = ".".join(_bare(part) for part in match.group(2).split("."))
                starts.append((number, name, is_array))
        first = starts[0][0] if starts else self.total + 1
        self.root_end = first
        for i, (number, name, is_array) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else self.total + 1
            index = counts.get((name, is_array), 0)
            counts[(name, is_array)] = index + 1
            self.blocks.append((number, end, name, is_array, index))

    def block(self, name: str, index: int) -> tuple[int, int] | None:
        """The line range of the index-th `[[name]]` block (header line included)."""
        for start, end, block_name, is_array, i in self.blocks:
            if block_name == name and is_array and i == index:
                return start, end
        return None

    def key_in(self, start: int, end: int, key: str) -> int | None:
        pattern = re.compile(
            r"^\s*(?:" + re.escape(key) + r"|\"" + re.escape(key) + r"\"|'"
            r"" + re.escape(key) + r"')\s*="
        )
        for number in range(start, min(end, self.total + 1)):
            if pattern.match(self.lines[number - 1]):
                return number
        return None

    def top_key(self, key: str) -> int:
        found = self.key_in(1, self.root_end, key)
        if found is not None:
            return found
        for start, _end, name, _is_array, _i in self.blocks:
            if name == key or name.startswith(key + "."):
                return start
        return 1

    def entry_key(self, name: str, index: int, key: str | None = None) -> int:
        """The line of `key` in the index-th [[name]] block, else its header, else line 1."""
        block = self.block(name, index)
        if block is None:
            # Written as an inline array (`tasks = [{...}]`): the array's own line.
            return self.top_key(name)
        if key is not None:
            found = self.key_in(block[0] + 1, block[1], key)
            if found is not None:
                return found
        return block[0]

    def nth_brace(self, start: int, end: int, n: int) -> int | None:
        """The line of the n-th (0-based) `{` from line start, outside quoted strings."""
        seen = 0
        for number in range(start, min(end, self.total + 1)):
            text = self.lines[number - 1]
            quote: str | None = None
            i = 0
            while i < len(text):
                ch = text[i]
                if quote:
                    if ch == "\\" and quote == '"':
                        i += 1
                    elif ch == quote:
                        quote = None
                elif ch in "\"'":
                    quote = ch
                elif ch == "#":
                    break
                elif ch == "{":
                    if seen == n:
                        return number
                    seen += 1
                i += 1
        return None


# -- the format, declared ----------------------------------------------------------------------
#
# The models say which keys each table has and what each value must be; pydantic checks a
# parsed document against them and reports every problem with its location, e.g.
# ("step", 3, "do", "kill", "by"). `_explain` turns the first problem into this format's
# own words and `_Lines` finds its line. What the models cannot see (ids used before they
# exist, timings that do not fit together, the size of the run) is checked after, in
# `_build`, in file order.


def _field_error(rest: str) -> PydanticCustomError:
    """A problem with one value; the text follows its key: `by` + ` must not be negative`."""
    return PydanticCustomError("scenario_field", "{rest}", {"rest": rest})


def _table_error(message: str, key: str | None = None) -> PydanticCustomError:
    """A problem with a whole table; `key` names the line it is about."""
    return PydanticCustomError("scenario", "{message}", {"message": message, "key": key})


def _field_error_whole(message: str) -> PydanticCustomError:
    """A problem with one value, told in full (the key's name is not put in front)."""
    return PydanticCustomError("scenario_value", "{message}", {"message": message})


def _not_blank(value: str) -> str:
    if not value.strip():
        raise _field_error(" must not be empty")
    return value


def _member(valid: Sequence[str], what: str, listing: str = "use one of") -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in valid:
            raise _field_error_whole(
                f'unknown {what} "{value}"{_suggest(value, valid)}; {listing} ' + ", ".join(valid)
            )
        return value

    return check


def _duration(*, allow_negative: bool = False, allow_zero: bool = False) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, float) and not math.isfinite(value):
            raise _field_error(f" must be a finite duration, got {value}")
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise _field_error(f' must be a duration like "10s", got {_type_name(value)}')
        try:
            ms = parse_duration(value, allow_negative=True)
        except DurationError as exc:
            raise _field_error(f": {exc}") from None
        except (OverflowError, ValueError):
            raise _field_error(f": duration {_show(value)} is far too large") from None
        if ms < 0 and not allow_negative:
            raise _field_error(f" must not be negative, got {_show(value)}")
        if ms == 0 and not allow_zero:
            raise _field_error(f" must be longer than zero, got {_show(value)}")
        if abs(ms) > MAX_DURATION_MS:
            shown = format_duration(ms) if abs(ms) < 10**15 else _show(value)
            raise _field_error(f" is too long: {shown} (at most 1 day, 24h)")
        return ms

    return check


def _instant(value: Any) -> int | str:
    """An instant of virtual time, as a duration since the start; "" for none."""
    return "" if value == "" else _duration(allow_zero=True)(value)


def _factor(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _field_error(f" must be a number, got {_type_name(value)}")
    if not math.isfinite(value) or value <= 0:
        raise _field_error(f" must be above zero, got {value}")
    if value > MAX_FACTOR:
        raise _field_error(f" is too large: {value} (at most {MAX_FACTOR:g})")
    return float(value)


def _count(low: int, high: int) -> Any:
    return Field(ge=low, le=high, strict=True)


Text = Annotated[str, Strict()]
Ident = Annotated[
    str, Strict(), StringConstraints(max_length=MAX_ID_LENGTH), AfterValidator(_not_blank)
]
NonBlank = Annotated[str, Strict(), AfterValidator(_not_blank)]
Flag = Annotated[bool, Strict()]
Duration = Annotated[int, BeforeValidator(_duration())]
Instant = Annotated[int | str, BeforeValidator(_instant)]
SignedDuration = Annotated[int, BeforeValidator(_duration(allow_negative=True, allow_zero=True))]
Count = Annotated[int, _count(0, 2**62)]
TaskSteps = Annotated[int, _count(1, MAX_TASK_STEPS)]
Attempts = Annotated[int, _count(1, MAX_ATTEMPTS)]
Kind = Annotated[str, Strict(), AfterValidator(_member(TASK_KINDS, "kind", "kinds are"))]
ModeName = Annotated[
    str, Strict(), AfterValidator(_member([m.value for m in Mode], "mode", "modes are"))
]
Choice = Annotated[
    str, Strict(), StringConstraints(max_length=MAX_CHOICE_LENGTH), AfterValidator(_not_blank)
]
Choices = Annotated[list[Choice], Field(min_length=MIN_CHOICES, max_length=MAX_CHOICES)]


class _Table(BaseModel):
    """A TOML table: only the keys declared, each checked strictly (no "7" for 7)."""

    model_config = ConfigDict(extra="forbid")


def _keys(model: type[BaseModel], *, leave_out: Sequence[str] = ()) -> tuple[str, ...]:
    """The keys a table of this model may have, as the file spells them, in order."""
    return tuple(
        key
        for name, info in model.model_fields.items()
        if (key := info.alias or name) not in leave_out
    )


# -- workers and tasks ----


class _WorkerTable(_Table):
    id: Ident
    autopilot: Flag = True
    skew_ms: SignedDuration = Field(0, alias="skew")
    self_fencing: Flag = False

    def spec(self) -> WorkerSpec:
        return WorkerSpec(
            id=self.id,
            autopilot=self.autopilot,
            skew_ms=self.skew_ms,
            self_fencing=self.self_fencing,
        )


class _TaskFields(_Table):
    kind: Kind | None = None
    steps: TaskSteps | None = None
    step_time_ms: Duration | None = Field(None, alias="step_time")
    max_attempts: Attempts | None = None

    def given(self) -> dict[str, Any]:
        """The keys the file gave, by their Python names; the rest keep TaskSpec's defaults."""
        return self.model_dump(exclude_unset=True, exclude={"do", "id", "task"})


class _TaskTable(_TaskFields):
    id: Ident

    def spec(self) -> TaskSpec:
        return TaskSpec(id=self.id, **self.given())


# -- actions: one model per action, its fields named as the action's dataclass fields ----


class _ActionTable(_Table):
    do: str

    def to_action(self) -> Action:
        given = self.model_dump(exclude_unset=True, exclude={"do"})
        return ACTION_TYPES[self.do](**given)


class _OnWorker(_ActionTable):
    worker: Ident


class _Advance(_ActionTable):
    do: Literal["advance"]
    by_ms: Duration = Field(alias="by")


class _FreezeHeartbeat(_OnWorker):
    do: Literal["freeze_heartbeat"]


class _Stall(_OnWorker):
    do: Literal["stall"]


class _Kill(_OnWorker):
    do: Literal["kill"]


class _Partition(_OnWorker):
    do: Literal["partition"]


class _Heal(_OnWorker):
    do: Literal["heal"]


class _Resume(_OnWorker):
    do: Literal["resume"]


class _Restart(_OnWorker):
    do: Literal["restart"]


class _AddWorker(_OnWorker):
    do: Literal["add_worker"]
    skew_ms: SignedDuration = Field(0, alias="skew")
    autopilot: Flag = True


class _Slow(_OnWorker):
    do: Literal["slow"]
    factor: Annotated[float, BeforeValidator(_factor)]


class _Skew(_OnWorker):
    do: Literal["skew"]
    by_ms: SignedDuration = Field(alias="by")


class _Enqueue(_TaskFields, _ActionTable):
    do: Literal["enqueue"]
    task: Ident

    def to_action(self) -> Action:
        return Enqueue(task=self.task, **self.given())


class _Approve(_ActionTable):
    do: Literal["approve"]
    task: Ident


class _Reject(_ActionTable):
    do: Literal["reject"]
    task: Ident


class _Claim(_OnWorker):
    do: Literal["claim"]
    task: Ident | None = None


class _Heartbeat(_OnWorker):
    do: Literal["heartbeat"]


class _Checkpoint(_OnWorker):
    do: Literal["checkpoint"]
    step: TaskSteps


class _Write(_OnWorker):
    do: Literal["write"]
    key: Ident
    value: Text


class _Effect(_OnWorker):
    do: Literal["effect"]
    key: Ident


class _Complete(_OnWorker):
    do: Literal["complete"]


class _Fail(_OnWorker):
    do: Literal["fail"]
    retry: Flag = True


class _Park(_OnWorker):
    do: Literal["park"]


_ACTION_TABLES: Final[tuple[type[_ActionTable], ...]] = (
    _Advance,
    _FreezeHeartbeat,
    _Stall,
    _Kill,
    _Partition,
    _Heal,
    _Resume,
    _Restart,
    _AddWorker,
    _Slow,
    _Skew,
    _Enqueue,
    _Approve,
    _Reject,
    _Claim,
    _Heartbeat,
    _Checkpoint,
    _Write,
    _Effect,
    _Complete,
    _Fail,
    _Park,
)
# Each action's keys, `do` left out; every key any action may carry in its [[step]] table.
ACTION_KEYS_OF: Final = {
    get_args(t.model_fields["do"].annotation)[0]: _keys(t, leave_out=("do",))
    for t in _ACTION_TABLES
}
ACTION_KEYS: Final = tuple(dict.fromkeys(k for keys in ACTION_KEYS_OF.values() for k in keys))


_AnyAction = Annotated[
    _Advance
    | _FreezeHeartbeat
    | _Stall
    | _Kill
    | _Partition
    | _Heal
    | _Resume
    | _Restart
    | _AddWorker
    | _Slow
    | _Skew
    | _Enqueue
    | _Approve
    | _Reject
    | _Claim
    | _Heartbeat
    | _Checkpoint
    | _Write
    | _Effect
    | _Complete
    | _Fail
    | _Park,
    Discriminator("do"),
]


# -- expectations: one model per subject ----


class _ExpectTable(_Table):
    subject: ClassVar[str]
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: Any) -> Any:
        model = handler(data)
        model._order = tuple(data)  # the file's order, for messages and the writer
        return model

    def to_expectation(self, line: int) -> Expectation:
        values = self.model_dump(by_alias=True)
        params = tuple((k, values[k]) for k in self._order if k != self.subject)
        return Expectation(self.subject, values[self.subject], params, line=line)


class _TaskExpect(_ExpectTable):
    subject: ClassVar[str] = "task"
    task: Ident
    status: Annotated[str, Strict(), AfterValidator(_member(TASK_STATUSES, "task status"))] = ""
    owner: Text = ""
    attempt: Count = 0
    lease_token: Count = 0
    fence_token: Count = 0
    checkpoint_step: Count = 0
    # virtual instants as durations since the start; "" = none (no lease, e.g. a finished
    # task, or mistake one's task with no version)
    expires_at: Instant = ""
    renew_deadline: Instant = ""


class _WorkerExpect(_ExpectTable):
    subject: ClassVar[str] = "worker"
    worker: Ident
    state: Annotated[str, Strict(), AfterValidator(_member(WORKER_STATES, "worker state"))] = ""
    holds: Text = ""
    # the tokens the worker believes it holds (they may be stale)
    lease_token: Count = 0
    fence_token: Count = 0


class _LedgerExpect(_ExpectTable):
    subject: ClassVar[str] = "ledger"
    ledger: Ident
    value: Text = ""
    fence_token: Count = 0
    writer: Text = ""


class _RejectedExpect(_ExpectTable):
    subject: ClassVar[str] = "rejected"
    rejected: Annotated[
        Ident, AfterValidator(_member((*REJECT_REASONS, "any"), "rejection reason"))
    ]
    worker: Text = ""
    task: Text = ""
    count: Count = 0


class _EffectExpect(_ExpectTable):
    subject: ClassVar[str] = "effect"
    effect: Ident
    applied: Count = 0


class _ViolationExpect(_ExpectTable):
    subject: ClassVar[str] = "violation"
    violation: Annotated[Ident, AfterValidator(_member((*VIOLATIONS, "any"), "violation"))]
    count: Count = 0


_MetricBound = Annotated[int, BeforeValidator(_duration(allow_zero=True))]


class _MetricExpect(_ExpectTable):
    subject: ClassVar[str] = "metric"
    metric: Annotated[Ident, AfterValidator(_member(METRICS, "metric"))]
    # recovery_time's bounds are durations, wasted_steps' are counts: read once the metric
    # is known (in _bounds), so both are taken as they come here.
    min: Any = None
    max: Any = None

    @model_validator(mode="after")
    def _bounds(self) -> "_MetricExpect":
        for key in ("min", "max"):
            raw = getattr(self, key)
            if raw is None:
                continue
            try:
                if self.metric == "recovery_time":
                    value = _duration(allow_zero=True)(raw)
                else:
                    value = _int_in(raw, 0, 2**62)
            except PydanticCustomError as err:
                raise _table_error(f"{key}{err.context['rest'] if err.context else ''}") from None
            setattr(self, key, value)
        if isinstance(self.min, int) and isinstance(self.max, int) and self.min > self.max:
            raise _table_error(f"metric {self.metric}: min is above max")
        return self


def _int_in(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _field_error(f" must be an integer, got {_show(value)}")
    if value < low:
        raise _field_error(f" must be at least {low}, got {value}")
    if value > high:
        raise _field_error(f" is too large: {value} (at most {high})")
    return value


_EXPECT_TABLES: Final[tuple[type[_ExpectTable], ...]] = (
    _TaskExpect,
    _WorkerExpect,
    _LedgerExpect,
    _RejectedExpect,
    _EffectExpect,
    _ViolationExpect,
    _MetricExpect,
)
# Each expectation subject, with the other keys its inline table may have.
EXPECT_SUBJECTS: Final = {t.subject: _keys(t, leave_out=(t.subject,)) for t in _EXPECT_TABLES}
_ALL_EXPECT_KEYS: Final = tuple(
    dict.fromkeys(k for subject, keys in EXPECT_SUBJECTS.items() for k in (subject, *keys))
)


def _subject_of(item: Any) -> str | None:
    """Which subject an expectation names (`rejected` wins: it may also name a worker)."""
    if not isinstance(item, dict):
        return None
    if "rejected" in item:
        return "rejected"
    named = [k for k in item if k in EXPECT_SUBJECTS]
    return named[0] if len(named) == 1 else None


def _one_subject(item: Any) -> Any:
    if not isinstance(item, dict):
        raise _table_error(f"each expectation must be an inline table, got {_type_name(item)}")
    if _subject_of(item) is not None:
        return item
    named = [k for k in item if k in EXPECT_SUBJECTS]
    if len(named) > 1:
        raise _table_error(
            f'an expectation names one subject, this one names "{named[0]}" and "{named[1]}"'
        )
    first = next(iter(item), None)
    if first is not None and first not in _ALL_EXPECT_KEYS:
        raise _table_error(
            f'unknown key "{first}" in an expectation{_suggest(first, _ALL_EXPECT_KEYS)}'
        )
    raise _table_error("an expectation needs a subject: one of " + ", ".join(EXPECT_SUBJECTS))


_AnyExpect = Annotated[
    Annotated[
        Annotated[_TaskExpect, Tag("task")]
        | Annotated[_WorkerExpect, Tag("worker")]
        | Annotated[_LedgerExpect, Tag("ledger")]
        | Annotated[_RejectedExpect, Tag("rejected")]
        | Annotated[_EffectExpect, Tag("effect")]
        | Annotated[_ViolationExpect, Tag("violation")]
        | Annotated[_MetricExpect, Tag("metric")],
        Discriminator(_subject_of),
    ],
    BeforeValidator(_one_subject),
]


# -- playback steps ----

_QUESTION_PARTS: Final = ("choices", "choices_zh", "answer", "why", "why_zh")


class _StepTable(_Table):
    say: Text | None = None
    say_zh: Text | None = None
    action: _AnyAction | None = Field(None, alias="do")
    expect: list[_AnyExpect] | None = None
    ask: NonBlank | None = None
    ask_zh: NonBlank | None = None
    choices: Choices | None = None
    choices_zh: Choices | None = None
    answer: Annotated[int, _count(1, MAX_CHOICES)] | None = None
    why: Text | None = None
    why_zh: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _gather_action(cls, data: Any) -> Any:
        """`do` and its keys sit flat in the [[step]] table; the action model reads them as
        one table. Without `do`, an action's key stays behind and is reported as such."""
        if not isinstance(data, dict) or "do" not in data:
            return data
        own = {k: v for k, v in data.items() if k not in ACTION_KEYS}
        own["do"] = {"do": data["do"], **{k: v for k, v in data.items() if k in ACTION_KEYS}}
        return own

    @model_validator(mode="after")
    def _whole(self) -> "_StepTable":
        asked = self.ask is not None or self.ask_zh is not None
        content = (self.say, self.say_zh, self.action, self.expect, self.ask, self.ask_zh)
        if all(part is None for part in content):
            raise _table_error("empty step: give it say, do or expect")
        for key in _QUESTION_PARTS:
            if getattr(self, key) is not None and not asked:
                raise _table_error(f'"{key}" without a question: add ask = "..."', key)
        n = len(self.choices) if self.choices is not None else None
        if self.choices_zh is not None and n is None:
            raise _table_error('"choices_zh" without choices: add choices = [...]', "choices_zh")
        if self.answer is not None and n is None:
            raise _table_error('"answer" without choices: add choices = [...]', "answer")
        if n is not None and self.answer is None:
            raise _table_error(
                f"choices need an answer: add answer = N, the right one's number (1 to {n})",
                "choices",
            )
        if n is not None and self.answer is not None and self.answer > n:
            raise _table_error(
                f"answer must be one of the choices, 1 to {n}, got {self.answer}", "answer"
            )
        if n is not None and self.choices_zh is not None and len(self.choices_zh) != n:
            raise _table_error(
                f"choices_zh has {len(self.choices_zh)} answers, choices has {n}: "
                "give both the same answers in the same order",
                "choices_zh",
            )
        return self

    def question(self) -> Question | None:
        if self.ask is None and self.ask_zh is None:
            return None
        return Question(
            ask=self.ask,
            ask_zh=self.ask_zh,
            choices=tuple(self.choices or ()),
            choices_zh=tuple(self.choices_zh or ()),
            answer=self.answer,
            why=self.why,
            why_zh=self.why_zh,
        )


# -- the document ----


class _ScenarioFile(_Table):
    title: NonBlank
    title_zh: Text | None = None
    summary: Text | None = None
    summary_zh: Text | None = None
    mode: ModeName = Mode.CORRECT.value
    seed: Annotated[int, _count(-MAX_SEED, MAX_SEED)] = 0
    lease_ttl: Duration | None = None
    heartbeat_every: Duration | None = None
    poll_every: Duration | None = None
    renew_deadline: Duration | None = None
    self_fencing: Flag = False
    workers: Annotated[list[_WorkerTable], Field(max_length=MAX_WORKERS)] = []
    tasks: Annotated[list[_TaskTable], Field(max_length=MAX_TASKS)] = []
    step: Annotated[list[_StepTable], Field(max_length=MAX_PLAYBACK_STEPS)] = []


TOP_KEYS: Final = _keys(_ScenarioFile)
WORKER_KEYS: Final = _keys(_WorkerTable)
TASK_KEYS: Final = _keys(_TaskTable)
STEP_KEYS: Final = _keys(_StepTable) + ACTION_KEYS
# The tables written as arrays of tables, and the word for one entry.
_ARRAYS: Final = {"workers": "worker", "tasks": "task", "step": "step"}


def _suggest(key: str, valid: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"  # dates and times


def _show(value: object) -> str:
    if isinstance(value, str):
        return toml_value(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return _type_name(value)


# -- from pydantic's problem to one line -------------------------------------------------------


def _explain(err: ErrorDetails, lines: _Lines) -> tuple[int, str]:
    """The line and the message for one validation problem, in this format's words."""
    loc = err["loc"]
    kind = err["type"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    raw = err["input"]
    names = [part for part in loc if isinstance(part, str)]
    key = names[-1] if names else ""
    line = _line_of(loc, lines, ctx.get("key") if kind == "scenario" else None)

    if len(loc) == 1 and key in _ARRAYS and kind in ("list_type", "too_long"):
        if kind == "too_long":
            count = ctx.get("actual_length")
            return lines.entry_key(key, ctx["max_length"]), (
                f"too many {key if key != 'step' else 'steps'}: {count} "
                f"(at most {ctx['max_length']})"
            )
        return line, f"{key} must be an array of tables, written [[{key}]]"
    if len(loc) == 2 and loc[0] in _ARRAYS and kind in ("model_type", "model_attributes_type"):
        return lines.top_key(str(loc[0])), (
            f"{loc[0]} must be an array of tables, written [[{loc[0]}]]"
        )

    in_action = len(loc) >= 3 and loc[0] == "step" and loc[2] == "do"
    in_expect = len(loc) >= 3 and loc[0] == "step" and loc[2] == "expect"
    if in_action and kind in ("union_tag_invalid", "union_tag_not_found"):
        do = raw.get("do") if isinstance(raw, dict) else raw
        if not isinstance(do, str):
            return line, f"do must be a string, got {_type_name(do)}"
        return line, f'unknown action "{do}"{_suggest(do, list(ACTION_TYPES))}'
    if in_expect and len(loc) == 3 and kind == "list_type":
        return line, (
            "expect must be an array of inline tables, like expect = "
            f'[{{ task = "t1", status = "done" }}], got {_type_name(raw)}'
        )

    if kind == "extra_forbidden":
        if in_action:
            return line, f'action "{loc[3]}" takes no key "{key}"'
        if in_expect:
            subject = str(loc[-2])
            valid = EXPECT_SUBJECTS[subject]
            return line, (
                f'unknown key "{key}" in a {subject} expectation{_suggest(key, valid)}; '
                "it may have " + ", ".join(valid)
            )
        if loc[0] == "step" and key in ACTION_KEYS:
            return line, f'"{key}" without an action: add do = "..."'
        table, valid = "the scenario", TOP_KEYS
        if len(loc) > 1:
            table = f"[[{loc[0]}]]"
            valid = {"workers": WORKER_KEYS, "tasks": TASK_KEYS}.get(str(loc[0]), STEP_KEYS)
        return line, f'unknown key "{key}" in {table}{_suggest(key, valid)}'
    if kind == "missing":
        if loc == ("title",):
            return 1, 'missing title: add a line like title = "The fog"'
        if in_action:
            return lines.entry_key("step", int(loc[1]), "do"), (f'action "{loc[3]}" needs "{key}"')
        if loc[0] == "workers":
            return line, 'a worker needs an id, like id = "acheng"'
        if loc[0] == "tasks":
            return line, 'a task needs an id, like id = "sixth-floor"'

    name = key
    if len(loc) == 3 and loc[0] in ("workers", "tasks") and key == "id":
        name = f"{_ARRAYS[str(loc[0])]} id"
    if key in ("choices", "choices_zh") and isinstance(loc[-1], int):
        name = f"choice {loc[-1] + 1}" + (" in choices_zh" if key == "choices_zh" else "")
    if kind in ("scenario", "scenario_value"):
        return line, str(ctx["message"])
    if kind == "scenario_field":
        return line, f"{name}{ctx['rest']}"
    if kind == "string_type":
        return line, f"{name} must be a string, got {_type_name(raw)}"
    if kind == "bool_type":
        return line, f"{name} must be true or false, got {_type_name(raw)}"
    if kind == "int_type":
        return line, f"{name} must be an integer, got {_show(raw)}"
    if kind == "greater_than_equal":
        return line, f"{name} must be at least {ctx['ge']}, got {raw}"
    if kind == "less_than_equal":
        return line, f"{name} is too large: {raw} (at most {ctx['le']})"
    if kind == "string_too_long":
        return line, f"{name} is too long (at most {ctx['max_length']} characters)"
    if kind == "list_type" and key in ("choices", "choices_zh"):
        return line, f'{key} must be an array of short answers, like ["yes", "no"]'
    if kind in ("too_short", "too_long") and key in ("choices", "choices_zh"):
        return line, (
            f"{key} must have {MIN_CHOICES} to {MAX_CHOICES} answers, "
            f"got {ctx.get('actual_length')}"
        )
    return line, f"{name}: {err['msg'][:1].lower()}{err['msg'][1:]}"


def _line_of(loc: tuple[int | str, ...], lines: _Lines, key: str | None) -> int:
    """The line a location points at: the key in its table, else the table's header."""
    if not loc:
        return lines.top_key(key) if key else 1
    top = str(loc[0])
    if len(loc) == 1 or top not in _ARRAYS or not isinstance(loc[1], int):
        return lines.top_key(top)
    index = loc[1]
    if len(loc) >= 4 and loc[2] == "expect" and isinstance(loc[3], int):
        return _expect_line(lines, index, loc[3])
    if key is None:
        inner = [part for part in loc[2:] if isinstance(part, str)]
        key = inner[-1] if inner else None
    return lines.entry_key(top, index, key)


def _expect_line(lines: _Lines, step: int, n: int) -> int:
    """The line of the n-th inline table of a step's `expect`."""
    at = lines.entry_key("step", step, "expect")
    block = lines.block("step", step)
    if block is None:
        return at
    found = lines.nth_brace(at, block[1], n)
    return found if found is not None else at


def _first_problem(exc: ValidationError, lines: _Lines) -> tuple[int, str]:
    """The problem to report: an unknown top-level key first (it may explain the rest),
    then the one nearest the top of the file."""
    found = []
    for err in exc.errors(include_url=False):
        line, message = _explain(err, lines)
        unknown_top = err["type"] == "extra_forbidden" and len(err["loc"]) == 1
        found.append((0 if unknown_top else 1, line, message))
    _rank, line, message = min(found, key=lambda f: (f[0], f[1]))
    return line, message


# -- after the models: what needs the whole file ----------------------------------------------


def _build(path: str, source: str, doc: dict[str, Any]) -> Scenario:
    lines = _Lines(source)

    def fail(line: int, message: str) -> ScenarioError:
        return ScenarioError(path, line, message)

    try:
        model = _ScenarioFile.model_validate(doc)
    except ValidationError as exc:
        line, message = _first_problem(exc, lines)
        raise fail(line, message) from None
    except RecursionError:
        raise fail(1, "nested too deeply") from None

    warnings: list[str] = []
    config = _lease_config(model, doc, lines, fail, warnings, path)
    _unique(model.workers, "workers", "worker", lines, fail)
    _unique(model.tasks, "tasks", "task", lines, fail)
    tasks = tuple(t.spec() for t in model.tasks)
    total = 0
    for i, task in enumerate(tasks):
        total += task.steps
        if total > MAX_TOTAL_STEPS:
            raise fail(
                lines.entry_key("tasks", i, "steps"),
                f"too much work: the tasks add up to more than {MAX_TOTAL_STEPS} steps",
            )
    settings = SimSettings(
        mode=Mode(model.mode),
        seed=model.seed,
        config=config,
        self_fencing=model.self_fencing,
        workers=tuple(w.spec() for w in model.workers),
        tasks=tasks,
    )
    state = _State(settings)
    steps = tuple(_step(i, entry, state, lines, fail) for i, entry in enumerate(model.step))
    return Scenario(
        path=path,
        title=model.title,
        title_zh=model.title_zh,
        summary=model.summary,
        summary_zh=model.summary_zh,
        settings=settings,
        steps=steps,
        warnings=tuple(warnings),
    )


Fail = Callable[[int, str], ScenarioError]


def _unique(
    entries: Sequence[_WorkerTable | _TaskTable], array: str, what: str, lines: _Lines, fail: Fail
) -> None:
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.id in seen:
            raise fail(lines.entry_key(array, i, "id"), f'duplicate {what} id "{entry.id}"')
        seen.add(entry.id)


def _lease_config(
    model: _ScenarioFile,
    doc: dict[str, Any],
    lines: _Lines,
    fail: Fail,
    warnings: list[str],
    path: str,
) -> LeaseConfig:
    ttl = model.lease_ttl if model.lease_ttl is not None else DEFAULT_TTL_MS
    config = LeaseConfig(
        ttl_ms=ttl,
        heartbeat_every_ms=model.heartbeat_every,
        renew_deadline_ms=model.renew_deadline,
        poll_every_ms=model.poll_every if model.poll_every is not None else DEFAULT_POLL_MS,
    )

    def line_of(*keys: str) -> int:
        return next((lines.top_key(k) for k in keys if k in doc), 1)

    if config.heartbeat_ms <= 0 or config.deadline_ms <= 0:
        raise fail(line_of("lease_ttl"), "lease_ttl is too short to divide into beats")
    if not ttl > config.deadline_ms:
        raise fail(
            line_of("renew_deadline", "lease_ttl"),
            f"lease_ttl ({format_duration(ttl)}) must be longer than renew_deadline "
            f"({format_duration(config.deadline_ms)})",
        )
    if not config.deadline_ms > config.heartbeat_ms:
        raise fail(
            line_of("heartbeat_every", "renew_deadline", "lease_ttl"),
            f"renew_deadline ({format_duration(config.deadline_ms)}) must be longer than "
            f"heartbeat_every ({format_duration(config.heartbeat_ms)})",
        )
    if model.mode == Mode.LONG_LEASE.value:
        long_deadline = LONG_LEASE_TTL_MS * 2 // 3
        if config.heartbeat_ms >= long_deadline:
            raise fail(
                line_of("heartbeat_every", "lease_ttl"),
                f"heartbeat_every ({format_duration(config.heartbeat_ms)}) must be shorter "
                f"than long_lease's renew deadline ({format_duration(long_deadline)})",
            )
    for message in config.timing_warnings():
        line = line_of("heartbeat_every", "lease_ttl")
        warnings.append(f"{path}:{line}: warning: {message}")
    return config


def _step(index: int, entry: _StepTable, state: "_State", lines: _Lines, fail: Fail) -> Step:
    def where(key: str | None = None) -> int:
        return lines.entry_key("step", index, key)

    action = None
    action_line = None
    if entry.action is not None:
        action_line = where("do")
        action = entry.action.to_action()
        state.take(action, where, action_line, fail)
    expects = tuple(
        table.to_expectation(_expect_line(lines, index, n))
        for n, table in enumerate(entry.expect or ())
    )
    for exp in expects:
        state.check(exp, fail)
    return Step(
        say=entry.say,
        say_zh=entry.say_zh,
        action=action,
        expects=expects,
        question=entry.question(),
        line=where(),
        action_line=action_line,
    )


class _State:
    """Workers and tasks known so far while reading the steps, and a work estimate."""

    def __init__(self, settings: SimSettings) -> None:
        self.workers: dict[str, bool] = {w.id: w.autopilot for w in settings.workers}
        self.tasks: set[str] = {t.id for t in settings.tasks}
        self.total_task_steps = sum(t.steps for t in settings.tasks)
        config = settings.config
        self.per_worker = 1 / config.poll_every_ms + 1 / config.heartbeat_ms
        self.wakeups = 0.0

    def wakeups_per_ms(self) -> float:
        return self.per_worker * max(1, len(self.workers))

    def take(self, action: Action, where: Callable[[str], int], line: int, fail: Fail) -> None:
        """Check an action against what exists so far, then count what it adds."""
        worker = getattr(action, "worker", None)
        task = getattr(action, "task", None)
        match action:
            case AddWorker():
                if action.worker in self.workers:
                    raise fail(where("worker"), f'duplicate worker id "{action.worker}"')
                if len(self.workers) >= MAX_WORKERS:
                    raise fail(where("worker"), f"too many workers (at most {MAX_WORKERS})")
                self.workers[action.worker] = action.autopilot
                return
            case Enqueue():
                if action.task in self.tasks:
                    raise fail(where("task"), f'duplicate task id "{action.task}"')
                if len(self.tasks) >= MAX_TASKS:
                    raise fail(where("task"), f"too many tasks (at most {MAX_TASKS})")
                self.tasks.add(action.task)
                self.total_task_steps += action.steps
                if self.total_task_steps > MAX_TOTAL_STEPS:
                    raise fail(
                        line,
                        f"too much work: the tasks add up to more than {MAX_TOTAL_STEPS} steps",
                    )
                return
            case Advance():
                self.wakeups += self.wakeups_per_ms() * action.by_ms
                if self.wakeups > MAX_WAKEUPS:
                    raise fail(
                        where("by"),
                        "this run would be too long to simulate: about "
                        f"{int(self.wakeups)} worker wake-ups by here (at most {MAX_WAKEUPS}); "
                        "advance less time or poll less often",
                    )
                return
        if worker is not None:
            self.need_worker(worker, where("worker"), fail)
            if isinstance(action, MANUAL_ACTIONS) and self.workers[worker]:
                raise fail(
                    where("worker"),
                    f'"{action.name}" is a manual operation, but worker "{worker}" is on '
                    "autopilot (give it autopilot = false)",
                )
        if task is not None:
            self.need_task(task, where("task"), fail)

    def check(self, exp: Expectation, fail: Fail) -> None:
        """An expectation may name only workers and tasks that exist by its step."""
        if exp.subject == "task":
            self.need_task(exp.value, exp.line, fail)
        elif exp.subject == "worker":
            self.need_worker(exp.value, exp.line, fail)
        for key, value in exp.params:
            if not isinstance(value, str) or not value:
                continue
            if key in ("owner", "writer") or (exp.subject == "rejected" and key == "worker"):
                self.need_worker(value, exp.line, fail)
            elif key == "holds" or (exp.subject == "rejected" and key == "task"):
                self.need_task(value, exp.line, fail)

    def need_worker(self, wid: str, line: int, fail: Fail) -> None:
        if wid not in self.workers:
            known = sorted(self.workers)
            raise fail(
                line,
                f'unknown worker "{wid}"{_suggest(wid, known)}'
                + ("" if known else " (there are no workers yet)"),
            )

    def need_task(self, tid: str, line: int, fail: Fail) -> None:
        if tid not in self.tasks:
            known = sorted(self.tasks)
            raise fail(
                line,
                f'unknown task "{tid}"{_suggest(tid, known)}'
                + ("" if known else " (there are no tasks yet)"),
            )
