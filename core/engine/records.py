"""Plain, immutable records the store hands out: leases and rows, safe to share with a UI."""

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from core.engine.errors import InvalidArgument, InvalidPayload
from core.engine.ids import MAX_TOKEN, check_id, check_whole

# Built once: building an encoder per call was a visible share of an event row's cost.
# NaN and Infinity are refused, since they are not JSON and another reader would choke.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def dump_json(value: Any) -> str:
    """Canonical JSON: sorted keys and no spaces, so equal values give equal bytes."""
    return _ENCODER.encode(value)


# An event's detail is a handful of words and numbers, and most calls repeat one seen
# before (every refusal of one stale lease says the same): its text is kept by the values
# and their types. Only where equal values of one type always give the same text: strings
# and integers (enums of either included; True and 1 differ by type). A float is not (0.0
# and -0.0 are equal), nor a list or a dict (unhashable, or equal to another type's).
@functools.lru_cache(maxsize=4096)
def _plain(types: tuple[type, ...]) -> bool:
    return all(issubclass(t, (str, int)) for t in types)


@functools.lru_cache(maxsize=4096)
def _detail_text(items: tuple[tuple[str, Any], ...], types: tuple[type, ...]) -> str:
    return dump_json(dict(items))


def detail_json(detail: dict[str, Any]) -> str:
    """`dump_json` of an event's detail (a flat dict), the same text, kept for its next use."""
    types = tuple(map(type, detail.values()))
    if not _plain(types):
        return dump_json(detail)
    return _detail_text(tuple(detail.items()), types)


# A payload, a state, a result or a page is a worker's notes, not its data: a value past a
# megabyte would be copied into every read of its table, every frame of a screen.
MAX_STORED_CHARS = 1_000_000


def stored_json(value: Any, what: str) -> str:
    """`dump_json` of a caller's value (a payload, a state, a result), or InvalidPayload in
    one line for what no database would take: not JSON, nested too deep, not UTF-8 text."""
    try:
        text = dump_json(value)
        # A lone surrogate (bytes that were not UTF-8) passes the encoder but no database.
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidPayload(f"{what} holds a lone surrogate: it is not UTF-8 text") from None
    except (TypeError, ValueError) as exc:
        raise InvalidPayload(f"{what} is not JSON-serialisable: {exc}") from None
    except RecursionError:
        raise InvalidPayload(f"{what} is nested too deeply to store as JSON") from None
    if len(text) > MAX_STORED_CHARS:
        raise InvalidPayload(
            f"{what} is {len(text)} characters as JSON, more than the store keeps "
            f"(at most {MAX_STORED_CHARS})"
        )
    return text


@dataclass(frozen=True, slots=True)
class Lease:
    """What a holder keeps in memory after a claim: the lease tag and the fence tag."""

    task_id: str
    owner_id: str
    lease_token: int
    fence_token: int
    attempt: int
    expires_at: int | None  # None in no_expiry mode: `running` has no end
    renew_deadline: int | None
    kind: str = "ledger"


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One row of `agent_tasks`."""

    task_id: str
    kind: str
    status: str
    owner_id: str | None
    attempt: int
    max_attempts: int
    lease_token: int
    fence_token: int
    lease_expires_at: int | None
    renew_deadline: int | None
    last_heartbeat_at: int | None
    checkpoint_uri: str | None
    input_payload: str | None
    result: str | None
    error_code: str | None
    approved_at: int | None
    updated_at: int


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """One saved checkpoint."""

    task_id: str
    seq: int
    step: int
    state: dict[str, Any]
    fence_token: int
    created_at: int


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One page of the master ledger."""

    key: str
    value: str
    fence_token: int
    writer: str
    updated_at: int
    task_id: str


@dataclass(frozen=True, slots=True)
class EffectRow:
    """One side effect and how many times it was really applied."""

    idempotency_key: str
    task_id: str
    effect: str
    fence_token: int
    result: dict[str, Any]
    applied_at: int
    applied_count: int


@dataclass(frozen=True, slots=True)
class EffectOutcome:
    """The answer to apply_effect: applied now, or deduplicated with the stored result."""

    applied: bool
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class EventRow:
    """One line of the loan register."""

    seq: int
    at: int
    event: str
    task_id: str | None = None
    worker_id: str | None = None
    lease_token: int | None = None
    fence_token: int | None = None
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """The event as the transcript writes it (`t` in seconds of virtual time)."""
        return {
            "seq": self.seq,
            "t": self.at / 1000,
            "event": self.event,
            "task": self.task_id,
            "worker": self.worker_id,
            "lease_token": self.lease_token,
            "fence_token": self.fence_token,
            "reason": self.reason,
            "detail": self.detail,
        }


def check_lease(lease: object, what: str = "lease") -> Lease:
    """`lease` if it is one (what `claim` returned), each field of its type and range;
    InvalidArgument naming it if not. A Lease is a plain dataclass anyone can build: one
    holding `fence_token="1"` would pass a database's loose comparison and be accepted as
    the holder of fence 1, and `10**30` would overflow the driver mid-transaction."""
    if not isinstance(lease, Lease):
        raise InvalidArgument(
            f"{what} must be a Lease, as claim returns it, got {type(lease).__name__}"
        )
    check_id(lease.task_id, f"{what}.task_id")
    check_id(lease.owner_id, f"{what}.owner_id")
    check_id(lease.kind, f"{what}.kind")
    check_whole(lease.lease_token, f"{what}.lease_token", 0, MAX_TOKEN)
    check_whole(lease.fence_token, f"{what}.fence_token", 0, MAX_TOKEN)
    check_whole(lease.attempt, f"{what}.attempt", 0, MAX_TOKEN)
    for name in ("expires_at", "renew_deadline"):
        value = getattr(lease, name)
        if value is not None:
            check_whole(value, f"{what}.{name}", -MAX_TOKEN, MAX_TOKEN)
    return lease
