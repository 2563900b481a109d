"""The downstream service's books in a saved fleet run (`--work`): its export, written as
lines beside the lease history, and read back as untrusted input, so that `fleet --check`
judges them with the same judge as the live run did.

A file anyone can edit could drop a charge or a request to hide a harm: the books' first
line says how many of each they hold and in what order the requests came (`seq` from 1,
no gap), every charge is the one a `charged` request made (and every such request's charge
is there), and a file that does not hold exactly those is not taken.
"""

from typing import Any

from core.downstream.books import Endpoint, Verdict
from core.fleet.untrusted import (
    MAX_INSTANT_MS,
    Unreadable,
    maybe_text,
    maybe_whole,
    text,
    version,
    whole,
)

BOOKS_VERSION = 1
KINDS = ("service", "service_request", "service_charge")


def service_lines(books: dict[str, Any]) -> list[dict[str, Any]]:
    """The service's export (`Books.export()`) as a saved run's lines."""
    history, charges = books["history"], books["charges"]
    head = {
        "t": "service",
        "v": BOOKS_VERSION,
        "fencing": bool(books["fencing"]),
        "requests": len(history),
        "charges": len(charges),
    }
    return [
        head,
        *({"t": "service_request", **entry} for entry in history),
        *({"t": "service_charge", **charge} for charge in charges),
    ]


def _word(line: dict[str, Any], key: str, words: type[Endpoint] | type[Verdict]) -> str:
    said = text(line, key)
    if said not in {w.value for w in words}:
        raise Unreadable(f"its {key!r} {said!a} is not one the service says")
    return said


class SavedBooks:
    """The service's books as a saved run holds them, line by line."""

    def __init__(self) -> None:
        self.head: dict[str, Any] | None = None
        self.history: list[dict[str, Any]] = []
        self.charges: list[dict[str, Any]] = []

    def take(self, kind: str, line: dict[str, Any]) -> None:
        """One line of the books; Unreadable says what is wrong with it."""
        if kind == "service":
            if self.head is not None:
                raise Unreadable("a second head of the service's books")
            version(line, BOOKS_VERSION, "the service's books")
            fencing = line.get("fencing")
            if not isinstance(fencing, bool):
                raise Unreadable("the service's books do not say whether it fenced")
            self.head = {
                "fencing": fencing,
                "requests": whole(line, "requests"),
                "charges": whole(line, "charges"),
            }
            return
        if self.head is None:
            raise Unreadable("a line of the service's books before their head")
        if kind == "service_request":
            seq = whole(line, "seq", low=1)
            if seq != len(self.history) + 1:
                raise Unreadable(
                    f"the service's request {seq} comes where request {len(self.history) + 1}"
                    " should: one is missing or repeated"
                )
            detail = line.get("detail", {})
            if not isinstance(detail, dict):
                raise Unreadable("a request whose detail is not an object")
            self.history.append(
                {
                    "seq": seq,
                    "at_ms": whole(line, "at_ms", high=MAX_INSTANT_MS),
                    "endpoint": _word(line, "endpoint", Endpoint),
                    "key": maybe_text(line, "key"),
                    "token": maybe_whole(line, "token"),
                    "newest": maybe_whole(line, "newest"),
                    "idempotency_key": maybe_text(line, "idempotency_key"),
                    "verdict": _word(line, "verdict", Verdict),
                    "detail": detail,
                }
            )
        else:
            self.charges.append(
                {
                    "id": text(line, "id"),
                    "task": text(line, "task"),
                    "memo": text(line, "memo"),
                    "amount": whole(line, "amount", low=1),
                    "idempotency_key": maybe_text(line, "idempotency_key"),
                }
            )

    def export(self) -> dict[str, Any] | None:
        """The books as the service's own export; None if the run kept none. Unreadable if
        they hold other than their head says."""
        if self.head is None:
            return None
        for what, have in (("requests", self.history), ("charges", self.charges)):
            if len(have) != self.head[what]:
                raise Unreadable(
                    f"the service's books say they hold {self.head[what]} {what}, and the file"
                    f" holds {len(have)}"
                )
        made = {c["id"]: c for c in self.charges}
        if len(made) != len(self.charges):
            raise Unreadable("the service's books hold one charge twice")
        for entry in self.history:
            if entry["verdict"] != Verdict.CHARGED:
                continue
            charged = entry["detail"]
            charge = made.pop(str(charged.get("id")), None)
            same = ("task", "memo", "amount")
            if charge is None or any(charge[k] != charged.get(k) for k in same):
                raise Unreadable(
                    f"the service's request {entry['seq']} made a charge"
                    f" {charged.get('id')!a} its charges do not hold as it was made"
                )
        if made:
            raise Unreadable(
                f"the service's charge {next(iter(made))!a} was made by no request in its history"
            )
        return {"fencing": self.head["fencing"], "charges": self.charges, "history": self.history}
