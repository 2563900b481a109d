"""Scenario files: the public TOML format the player, the TUI and the fuzzer share.

A scenario is plain TOML read with the standard library's `tomllib`; nothing in it is ever
executed. `load_scenario` / `parse_scenario` turn a file into a `Scenario` (settings, workers,
tasks and playback steps) or raise `ScenarioError`, whose text is one line `FILE:LINE: what is
wrong`. The format is documented in docs/scenario-format.md.

tomllib gives no line numbers for values, so the line of a key is found by scanning the raw
text: the N-th `[[step]]` header, then the key inside that block, falling back to the
block's header line and then to line 1.
"""

import difflib
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from core.engine.config import LONG_LEASE_TTL_MS, LeaseConfig, Mode
from core.engine.durations import DurationError, format_duration, parse_duration
from core.engine.errors import BorrowedKeysError, RejectReason
from core.sim.spec import (
    ACTIONS,
    MANUAL_ACTIONS,
    TASK_KINDS,
    WORKER_STATES,
    Action,
    SimSettings,
    TaskSpec,
    WorkerSpec,
)

# -- the vocabulary ------------------------------------------------------------------------

TOP_KEYS: Final = (
    "title",
    "title_zh",
    "summary",
    "summary_zh",
    "mode",
    "seed",
    "lease_ttl",
    "heartbeat_every",
    "poll_every",
    "renew_deadline",
    "self_fencing",
    "workers",
    "tasks",
    "step",
)
WORKER_KEYS: Final = ("id", "autopilot", "skew", "self_fencing")
TASK_KEYS: Final = ("id", "kind", "steps", "step_time", "max_attempts")
STEP_OWN_KEYS: Final = ("say", "say_zh", "do", "expect")
# Every key an action may carry in its [[step]] table.
ACTION_KEYS: Final = (
    "by",
    "worker",
    "task",
    "factor",
    "key",
    "value",
    "step",
    "retry",
    "autopilot",
    "skew",
    "kind",
    "steps",
    "step_time",
    "max_attempts",
)
STEP_KEYS: Final = STEP_OWN_KEYS + ACTION_KEYS

TASK_STATUSES: Final = ("queued", "running", "waiting", "done", "dead")
REJECT_REASONS: Final = tuple(r.value for r in RejectReason)
VIOLATIONS: Final = (
    "stale_write_accepted",
    "double_owner",
    "duplicate_effect",
    "completed_twice",
    "stuck_task",
)
METRICS: Final = ("wasted_steps", "recovery_time")

# Each expectation subject, with the other keys its inline table may have.
EXPECT_SUBJECTS: Final[dict[str, tuple[str, ...]]] = {
    "task": (
        "status",
        "owner",
        "attempt",
        "lease_token",
        "fence_token",
        "checkpoint_step",
        "expires_at",
        "renew_deadline",
    ),
    "worker": ("state", "holds", "lease_token", "fence_token"),
    "ledger": ("value", "fence_token", "writer"),
    "rejected": ("worker", "task", "count"),
    "effect": ("applied",),
    "violation": ("count",),
    "metric": ("min", "max"),
}

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
    expires_at are in ms.
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

    def to_toml(self) -> str:
        """The expectation as an inline TOML table, e.g. `{ task = "t1", status = "done" }`."""
        parts = [f"{k} = {_toml_expect_value(self, k, v)}" for k, v in self.items()]
        return "{ " + ", ".join(parts) + " }"


@dataclass(frozen=True, slots=True)
class Step:
    """One playback step: narration, at most one action, and expectations checked after it."""

    say: str | None = None
    say_zh: str | None = None
    action: Action | None = None
    expects: tuple[Expectation, ...] = ()
    line: int = field(default=0, compare=False)  # where its [[step]] header is
    action_line: int | None = field(default=None, compare=False)  # where its `do` is

    def narration(self, lang: str = "en") -> str | None:
        """The narration in `lang`, falling back to the other language."""
        if lang == "zh":
            return self.say_zh if self.say_zh is not None else self.say
        return self.say if self.say is not None else self.say_zh


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


def _toml_expect_value(exp: Expectation, key: str, value: ExpectValue) -> str:
    if exp.subject == "metric" and exp.value == "recovery_time" and key in ("min", "max"):
        assert isinstance(value, int)
        return toml_string(format_duration(value))
    if exp.subject == "task" and key in TIME_KEYS and isinstance(value, int):
        return toml_string(instant_text(value))
    if isinstance(value, str):
        return toml_string(value)
    return str(value)


def instant_text(ms: int) -> str:
    """A virtual instant as a duration since the start, in seconds when whole: "80s", not
    "1m20s", so it reads like the narration's "at 80 s"."""
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def toml_string(text: str) -> str:
    """A TOML basic string for any text (escapes quotes, backslashes, controls and DEL)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


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
    return _Builder(path, source, doc).build()


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


# -- the builder -----------------------------------------------------------------------------


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
        return toml_string(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return _type_name(value)


class _Builder:
    def __init__(self, path: str, source: str, doc: dict[str, Any]) -> None:
        self.path = path
        self.doc = doc
        self.lines = _Lines(source)
        self.warnings: list[str] = []

    def fail(self, line: int | None, message: str) -> ScenarioError:
        return ScenarioError(self.path, line, message)

    # -- typed readers; `where` gives the line for an error -------------------------------

    def text(self, value: object, name: str, line: int) -> str:
        if not isinstance(value, str):
            raise self.fail(line, f"{name} must be a string, got {_type_name(value)}")
        return value

    def ident(self, value: object, name: str, line: int) -> str:
        text = self.text(value, name, line)
        if not text.strip():
            raise self.fail(line, f"{name} must not be empty")
        if len(text) > MAX_ID_LENGTH:
            raise self.fail(line, f"{name} is too long (at most {MAX_ID_LENGTH} characters)")
        return text

    def flag(self, value: object, name: str, line: int) -> bool:
        if not isinstance(value, bool):
            raise self.fail(line, f"{name} must be true or false, got {_type_name(value)}")
        return value

    def integer(self, value: object, name: str, line: int, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(line, f"{name} must be an integer, got {_show(value)}")
        if value < low:
            raise self.fail(line, f"{name} must be at least {low}, got {value}")
        if value > high:
            raise self.fail(line, f"{name} is too large: {value} (at most {high})")
        return value

    def duration(
        self,
        value: object,
        name: str,
        line: int,
        *,
        allow_negative: bool = False,
        allow_zero: bool = False,
    ) -> int:
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(line, f"{name} must be a finite duration, got {value}")
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise self.fail(line, f'{name} must be a duration like "10s", got {_type_name(value)}')
        try:
            ms = parse_duration(value, allow_negative=True)
        except DurationError as exc:
            raise self.fail(line, f"{name}: {exc}") from None
        except (OverflowError, ValueError):
            raise self.fail(line, f"{name}: duration {_show(value)} is far too large") from None
        if ms < 0 and not allow_negative:
            raise self.fail(line, f"{name} must not be negative, got {_show(value)}")
        if ms == 0 and not allow_zero:
            raise self.fail(line, f"{name} must be longer than zero, got {_show(value)}")
        if abs(ms) > MAX_DURATION_MS:
            shown = format_duration(ms) if abs(ms) < 10**15 else _show(value)
            raise self.fail(line, f"{name} is too long: {shown} (at most 1 day, 24h)")
        return ms

    def array_of_tables(self, key: str) -> list[dict[str, Any]]:
        value = self.doc.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(
                self.lines.top_key(key),
                f"{key} must be an array of tables, written [[{key}]]",
            )
        return value

    def unknown_keys(
        self, table: Mapping[str, Any], valid: Sequence[str], what: str, line_of: Any
    ) -> None:
        for key in table:
            if key not in valid:
                raise self.fail(
                    line_of(key), f'unknown key "{key}" in {what}{_suggest(key, valid)}'
                )

    # -- the document ------------------------------------------------------------------

    def build(self) -> Scenario:
        doc = self.doc
        top = self.lines.top_key
        self.unknown_keys(doc, TOP_KEYS, "the scenario", top)
        if "title" not in doc:
            raise self.fail(1, 'missing title: add a line like title = "The fog"')
        title = self.text(doc["title"], "title", top("title"))
        if not title.strip():
            raise self.fail(top("title"), "title must not be empty")
        texts: dict[str, str | None] = {}
        for key in ("title_zh", "summary", "summary_zh"):
            texts[key] = self.text(doc[key], key, top(key)) if key in doc else None

        mode = Mode.CORRECT
        if "mode" in doc:
            raw = self.text(doc["mode"], "mode", top("mode"))
            valid_modes = [m.value for m in Mode]
            if raw not in valid_modes:
                raise self.fail(
                    top("mode"),
                    f'unknown mode "{raw}"{_suggest(raw, valid_modes)}; modes are '
                    + ", ".join(valid_modes),
                )
            mode = Mode(raw)
        seed = 0
        if "seed" in doc:
            seed = self.integer(doc["seed"], "seed", top("seed"), -MAX_SEED, MAX_SEED)
        self_fencing = False
        if "self_fencing" in doc:
            self_fencing = self.flag(doc["self_fencing"], "self_fencing", top("self_fencing"))
        config = self.lease_config()

        workers = self.workers()
        tasks = self.tasks()
        settings = SimSettings(
            mode=mode,
            seed=seed,
            config=config,
            self_fencing=self_fencing,
            workers=workers,
            tasks=tasks,
        )
        steps = self.steps(settings)
        return Scenario(
            path=self.path,
            title=title,
            title_zh=texts["title_zh"],
            summary=texts["summary"],
            summary_zh=texts["summary_zh"],
            settings=settings,
            steps=steps,
            warnings=tuple(self.warnings),
        )

    def lease_config(self) -> LeaseConfig:
        doc, top = self.doc, self.lines.top_key
        got: dict[str, int] = {}
        for key in ("lease_ttl", "heartbeat_every", "poll_every", "renew_deadline"):
            if key in doc:
                got[key] = self.duration(doc[key], key, top(key))
        ttl = got.get("lease_ttl", DEFAULT_TTL_MS)
        config = LeaseConfig(
            ttl_ms=ttl,
            heartbeat_every_ms=got.get("heartbeat_every"),
            renew_deadline_ms=got.get("renew_deadline"),
            poll_every_ms=got.get("poll_every", DEFAULT_POLL_MS),
        )

        def line_of(*keys: str) -> int:
            return next((top(k) for k in keys if k in doc), 1)

        if config.heartbeat_ms <= 0 or config.deadline_ms <= 0:
            raise self.fail(line_of("lease_ttl"), "lease_ttl is too short to divide into beats")
        if not ttl > config.deadline_ms:
            raise self.fail(
                line_of("renew_deadline", "lease_ttl"),
                f"lease_ttl ({format_duration(ttl)}) must be longer than renew_deadline "
                f"({format_duration(config.deadline_ms)})",
            )
        if not config.deadline_ms > config.heartbeat_ms:
            raise self.fail(
                line_of("heartbeat_every", "renew_deadline", "lease_ttl"),
                f"renew_deadline ({format_duration(config.deadline_ms)}) must be longer than "
                f"heartbeat_every ({format_duration(config.heartbeat_ms)})",
            )
        if self.doc.get("mode") == Mode.LONG_LEASE.value:
            long_deadline = LONG_LEASE_TTL_MS * 2 // 3
            if config.heartbeat_ms >= long_deadline:
                raise self.fail(
                    line_of("heartbeat_every", "lease_ttl"),
                    f"heartbeat_every ({format_duration(config.heartbeat_ms)}) must be shorter "
                    f"than long_lease's renew deadline ({format_duration(long_deadline)})",
                )
        for message in config.timing_warnings():
            line = line_of("heartbeat_every", "lease_ttl")
            self.warnings.append(f"{self.path}:{line}: warning: {message}")
        return config

    def workers(self) -> tuple[WorkerSpec, ...]:
        entries = self.array_of_tables("workers")
        if len(entries) > MAX_WORKERS:
            raise self.fail(
                self.lines.entry_key("workers", MAX_WORKERS),
                f"too many workers: {len(entries)} (at most {MAX_WORKERS})",
            )
        seen: set[str] = set()
        out: list[WorkerSpec] = []
        for i, entry in enumerate(entries):

            def where(key: str | None = None, i: int = i) -> int:
                return self.lines.entry_key("workers", i, key)

            self.unknown_keys(entry, WORKER_KEYS, "[[workers]]", where)
            if "id" not in entry:
                raise self.fail(where(), 'a worker needs an id, like id = "acheng"')
            wid = self.ident(entry["id"], "worker id", where("id"))
            if wid in seen:
                raise self.fail(where("id"), f'duplicate worker id "{wid}"')
            seen.add(wid)
            autopilot = True
            if "autopilot" in entry:
                autopilot = self.flag(entry["autopilot"], "autopilot", where("autopilot"))
            skew = 0
            if "skew" in entry:
                skew = self.duration(
                    entry["skew"], "skew", where("skew"), allow_negative=True, allow_zero=True
                )
            fencing = False
            if "self_fencing" in entry:
                fencing = self.flag(entry["self_fencing"], "self_fencing", where("self_fencing"))
            out.append(WorkerSpec(id=wid, autopilot=autopilot, skew_ms=skew, self_fencing=fencing))
        return tuple(out)

    def task_fields(
        self, entry: Mapping[str, Any], where: Any
    ) -> tuple[str | None, int | None, int | None, int | None]:
        kind = steps = step_time = attempts = None
        if "kind" in entry:
            kind = self.text(entry["kind"], "kind", where("kind"))
            if kind not in TASK_KINDS:
                raise self.fail(
                    where("kind"),
                    f'unknown kind "{kind}"{_suggest(kind, TASK_KINDS)}; kinds are '
                    + ", ".join(TASK_KINDS),
                )
        if "steps" in entry:
            steps = self.integer(entry["steps"], "steps", where("steps"), 1, MAX_TASK_STEPS)
        if "step_time" in entry:
            step_time = self.duration(entry["step_time"], "step_time", where("step_time"))
        if "max_attempts" in entry:
            attempts = self.integer(
                entry["max_attempts"], "max_attempts", where("max_attempts"), 1, MAX_ATTEMPTS
            )
        return kind, steps, step_time, attempts

    def tasks(self) -> tuple[TaskSpec, ...]:
        entries = self.array_of_tables("tasks")
        if len(entries) > MAX_TASKS:
            raise self.fail(
                self.lines.entry_key("tasks", MAX_TASKS),
                f"too many tasks: {len(entries)} (at most {MAX_TASKS})",
            )
        seen: set[str] = set()
        out: list[TaskSpec] = []
        total = 0
        for i, entry in enumerate(entries):

            def where(key: str | None = None, i: int = i) -> int:
                return self.lines.entry_key("tasks", i, key)

            self.unknown_keys(entry, TASK_KEYS, "[[tasks]]", where)
            if "id" not in entry:
                raise self.fail(where(), 'a task needs an id, like id = "sixth-floor"')
            tid = self.ident(entry["id"], "task id", where("id"))
            if tid in seen:
                raise self.fail(where("id"), f'duplicate task id "{tid}"')
            seen.add(tid)
            kind, steps, step_time, attempts = self.task_fields(entry, where)
            spec = TaskSpec(id=tid)
            spec = TaskSpec(
                id=tid,
                kind=kind if kind is not None else spec.kind,
                steps=steps if steps is not None else spec.steps,
                step_time_ms=step_time if step_time is not None else spec.step_time_ms,
                max_attempts=attempts if attempts is not None else spec.max_attempts,
            )
            total += spec.steps
            if total > MAX_TOTAL_STEPS:
                raise self.fail(
                    where("steps"),
                    f"too much work: the tasks add up to more than {MAX_TOTAL_STEPS} steps",
                )
            out.append(spec)
        return tuple(out)

    # -- playback steps --------------------------------------------------------------------

    def steps(self, settings: SimSettings) -> tuple[Step, ...]:
        entries = self.array_of_tables("step")
        if len(entries) > MAX_PLAYBACK_STEPS:
            raise self.fail(
                self.lines.entry_key("step", MAX_PLAYBACK_STEPS),
                f"too many steps: {len(entries)} (at most {MAX_PLAYBACK_STEPS})",
            )
        state = _State(settings)
        return tuple(self.step(i, entry, state) for i, entry in enumerate(entries))

    def step(self, index: int, entry: dict[str, Any], state: "_State") -> Step:
        def where(key: str | None = None) -> int:
            return self.lines.entry_key("step", index, key)

        self.unknown_keys(entry, STEP_KEYS, "[[step]]", where)
        if not any(k in entry for k in STEP_OWN_KEYS):
            if entry:
                key = next(iter(entry))
                raise self.fail(where(key), f'"{key}" without an action: add do = "..."')
            raise self.fail(where(), "empty step: give it say, do or expect")
        say = self.text(entry["say"], "say", where("say")) if "say" in entry else None
        say_zh = (
            self.text(entry["say_zh"], "say_zh", where("say_zh")) if "say_zh" in entry else None
        )
        action = None
        action_line = None
        if "do" in entry:
            action_line = where("do")
            action = self.action(entry, where, action_line, state)
        else:
            stray = next((k for k in entry if k in ACTION_KEYS), None)
            if stray is not None:
                raise self.fail(where(stray), f'"{stray}" without an action: add do = "..."')
        expects: tuple[Expectation, ...] = ()
        if "expect" in entry:
            expects = self.expects(entry["expect"], index, where("expect"), state)
        return Step(
            say=say,
            say_zh=say_zh,
            action=action,
            expects=expects,
            line=where(),
            action_line=action_line,
        )

    def action(self, entry: Mapping[str, Any], where: Any, line: int, state: "_State") -> Action:
        name = self.text(entry["do"], "do", line)
        if name not in ACTIONS:
            raise self.fail(line, f'unknown action "{name}"{_suggest(name, list(ACTIONS))}')
        required, optional = ACTIONS[name]
        given = [k for k in entry if k in ACTION_KEYS]
        for key in given:
            if key not in required and key not in optional:
                raise self.fail(where(key), f'action "{name}" takes no key "{key}"')
        for key in sorted(required):
            if key not in entry:
                raise self.fail(line, f'action "{name}" needs "{key}"')

        fields: dict[str, Any] = {}
        if "worker" in entry:
            wid = self.ident(entry["worker"], "worker", where("worker"))
            if name == "add_worker":
                if wid in state.workers:
                    raise self.fail(where("worker"), f'duplicate worker id "{wid}"')
                if len(state.workers) >= MAX_WORKERS:
                    raise self.fail(where("worker"), f"too many workers (at most {MAX_WORKERS})")
            else:
                state.need_worker(self, wid, where("worker"))
                if name in MANUAL_ACTIONS and state.workers[wid]:
                    raise self.fail(
                        where("worker"),
                        f'"{name}" is a manual operation, but worker "{wid}" is on '
                        "autopilot (give it autopilot = false)",
                    )
            fields["worker"] = wid
        if "task" in entry:
            tid = self.ident(entry["task"], "task", where("task"))
            if name == "enqueue":
                if tid in state.tasks:
                    raise self.fail(where("task"), f'duplicate task id "{tid}"')
                if len(state.tasks) >= MAX_TASKS:
                    raise self.fail(where("task"), f"too many tasks (at most {MAX_TASKS})")
            else:
                state.need_task(self, tid, where("task"))
            fields["task"] = tid
        if "by" in entry:
            if name == "advance":
                fields["by_ms"] = self.duration(entry["by"], "by", where("by"))
            else:
                fields["by_ms"] = self.duration(
                    entry["by"], "by", where("by"), allow_negative=True, allow_zero=True
                )
        if "skew" in entry:  # add_worker's skew travels in by_ms, as the skew action's does
            fields["by_ms"] = self.duration(
                entry["skew"], "skew", where("skew"), allow_negative=True, allow_zero=True
            )
        if "factor" in entry:
            factor = entry["factor"]
            if isinstance(factor, bool) or not isinstance(factor, int | float):
                raise self.fail(
                    where("factor"), f"factor must be a number, got {_type_name(factor)}"
                )
            if not math.isfinite(factor) or factor <= 0:
                raise self.fail(where("factor"), f"factor must be above zero, got {factor}")
            if factor > MAX_FACTOR:
                raise self.fail(
                    where("factor"), f"factor is too large: {factor} (at most {MAX_FACTOR:g})"
                )
            fields["factor"] = float(factor)
        if "key" in entry:
            fields["key"] = self.ident(entry["key"], "key", where("key"))
        if "value" in entry:
            fields["value"] = self.text(entry["value"], "value", where("value"))
        if "step" in entry:
            fields["step"] = self.integer(entry["step"], "step", where("step"), 1, MAX_TASK_STEPS)
        if "retry" in entry:
            fields["retry"] = self.flag(entry["retry"], "retry", where("retry"))
        if "autopilot" in entry:
            fields["autopilot"] = self.flag(entry["autopilot"], "autopilot", where("autopilot"))
        kind, steps, step_time, attempts = self.task_fields(entry, where)
        if kind is not None:
            fields["kind"] = kind
        if steps is not None:
            fields["steps"] = steps
        if step_time is not None:
            fields["step_time_ms"] = step_time
        if attempts is not None:
            fields["max_attempts"] = attempts

        action = Action(name=name, **fields)
        if name == "add_worker":
            state.workers[fields["worker"]] = fields.get("autopilot", True)
        elif name == "enqueue":
            state.tasks.add(fields["task"])
            state.total_task_steps += steps if steps is not None else TaskSpec("").steps
            if state.total_task_steps > MAX_TOTAL_STEPS:
                raise self.fail(
                    line, f"too much work: the tasks add up to more than {MAX_TOTAL_STEPS} steps"
                )
        elif name == "advance":
            state.wakeups += state.wakeups_per_ms() * fields["by_ms"]
            if state.wakeups > MAX_WAKEUPS:
                raise self.fail(
                    where("by"),
                    "this run would be too long to simulate: about "
                    f"{int(state.wakeups)} worker wake-ups by here (at most {MAX_WAKEUPS}); "
                    "advance less time or poll less often",
                )
        return action

    def expects(
        self, value: object, index: int, line: int, state: "_State"
    ) -> tuple[Expectation, ...]:
        if not isinstance(value, list):
            raise self.fail(
                line,
                f"expect must be an array of inline tables, like expect = "
                f'[{{ task = "t1", status = "done" }}], got {_type_name(value)}',
            )
        block = self.lines.block("step", index)
        out = []
        for n, item in enumerate(value):
            item_line = line
            if block is not None:
                found = self.lines.nth_brace(line, block[1], n)
                item_line = found if found is not None else line
            out.append(self.expectation(item, item_line, state))
        return tuple(out)

    def expectation(self, item: object, line: int, state: "_State") -> Expectation:
        if not isinstance(item, dict):
            raise self.fail(
                line, f"each expectation must be an inline table, got {_type_name(item)}"
            )
        if "rejected" in item:
            subject = "rejected"
        else:
            named = [k for k in item if k in EXPECT_SUBJECTS]
            if not named:
                first = next(iter(item), None)
                if first is not None and first not in _ALL_EXPECT_KEYS:
                    raise self.fail(
                        line,
                        f'unknown key "{first}" in an expectation'
                        f"{_suggest(first, _ALL_EXPECT_KEYS)}",
                    )
                raise self.fail(
                    line,
                    "an expectation needs a subject: one of " + ", ".join(EXPECT_SUBJECTS),
                )
            if len(named) > 1:
                raise self.fail(
                    line,
                    f'an expectation names one subject, this one names "{named[0]}" and '
                    f'"{named[1]}"',
                )
            subject = named[0]
        valid = EXPECT_SUBJECTS[subject]
        for key in item:
            if key != subject and key not in valid:
                raise self.fail(
                    line,
                    f'unknown key "{key}" in a {subject} expectation{_suggest(key, valid)}; '
                    f"it may have " + ", ".join(valid),
                )
        value = self.ident(item[subject], subject, line)
        if subject == "task":
            state.need_task(self, value, line)
        elif subject == "worker":
            state.need_worker(self, value, line)
        elif subject == "rejected":
            self.one_of(value, (*REJECT_REASONS, "any"), "rejection reason", line)
        elif subject == "violation":
            self.one_of(value, (*VIOLATIONS, "any"), "violation", line)
        elif subject == "metric":
            self.one_of(value, METRICS, "metric", line)
        params: list[tuple[str, ExpectValue]] = []
        for key, raw in item.items():
            if key == subject:
                continue
            params.append((key, self.expect_param(subject, value, key, raw, line, state)))
        if subject == "metric":
            low, high = dict(params).get("min"), dict(params).get("max")
            if isinstance(low, int) and isinstance(high, int) and low > high:
                raise self.fail(line, f"metric {value}: min is above max")
        return Expectation(subject=subject, value=value, params=tuple(params), line=line)

    def one_of(self, value: str, valid: Sequence[str], what: str, line: int) -> None:
        if value not in valid:
            raise self.fail(
                line,
                f'unknown {what} "{value}"{_suggest(value, valid)}; use one of ' + ", ".join(valid),
            )

    def expect_param(
        self, subject: str, value: str, key: str, raw: object, line: int, state: "_State"
    ) -> ExpectValue:
        if key in ("attempt", "lease_token", "fence_token", "checkpoint_step", "count", "applied"):
            return self.integer(raw, key, line, 0, 2**62)
        if key == "status":
            text = self.text(raw, key, line)
            self.one_of(text, TASK_STATUSES, "task status", line)
            return text
        if key == "state":
            text = self.text(raw, key, line)
            self.one_of(text, WORKER_STATES, "worker state", line)
            return text
        if key in ("owner", "writer") or (subject == "rejected" and key == "worker"):
            text = self.text(raw, key, line)
            if text:
                state.need_worker(self, text, line)
            return text
        if key == "holds" or (subject == "rejected" and key == "task"):
            text = self.text(raw, key, line)
            if text:
                state.need_task(self, text, line)
            return text
        if key in TIME_KEYS:
            # a virtual instant as a duration since the start; "" = none (no lease, e.g. a
            # finished task, or mistake one's task with no version)
            if raw == "":
                return ""
            return self.duration(raw, key, line, allow_zero=True)
        if key in ("min", "max"):
            if value == "recovery_time":
                return self.duration(raw, key, line, allow_zero=True)
            return self.integer(raw, key, line, 0, 2**62)
        return self.text(raw, key, line)  # ledger value


_ALL_EXPECT_KEYS: Final = tuple(
    dict.fromkeys(k for subject, keys in EXPECT_SUBJECTS.items() for k in (subject, *keys))
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

    def need_worker(self, builder: _Builder, wid: str, line: int) -> None:
        if wid not in self.workers:
            known = sorted(self.workers)
            raise builder.fail(
                line,
                f'unknown worker "{wid}"{_suggest(wid, known)}'
                + ("" if known else " (there are no workers yet)"),
            )

    def need_task(self, builder: _Builder, tid: str, line: int) -> None:
        if tid not in self.tasks:
            known = sorted(self.tasks)
            raise builder.fail(
                line,
                f'unknown task "{tid}"{_suggest(tid, known)}'
                + ("" if known else " (there are no tasks yet)"),
            )
