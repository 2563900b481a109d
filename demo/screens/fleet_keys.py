"""The fleet screen's keys of its own: the key bar's hints, the add key, the decisions."""

from demo.controls import FAULTS, by_id
from demo.i18n import tr
from demo.widgets.keybar import Hint

# One more worker: `W`, beside `w` which chooses one. Not `n`, the simulated app's next
# step: a presenter's habit would start a process (and a fleet has no steps to go to).
ADD_KEY = "W"
# A person's answer to a task parked for approval: the simulated app's controls (`a`, `x`),
# their words, tooltips and help line, from the same table.
DECISIONS = (by_id("approve"), by_id("reject"))


def fleet_key_hints(lang: str, task_waits: bool = False) -> list[Hint]:
    """The key bar: the fault keys first (the simulated app's), then the fleet's own;
    while a task waits for a person, the keys that answer it first (`Moment.TASK_WAITS`,
    as the simulated app's buttons), so a short bar never drops them."""
    faults = [f for f in FAULTS if f.only_when is None]
    decisions = [Hint(c.first_key, tr(c.word, lang), 0) for c in DECISIONS]
    return [
        *(decisions if task_waits else ()),
        Hint("w", tr("choose_worker", lang), 0),
        *(Hint(f.key, tr(f.word, lang), 1) for f in faults),
        *(() if task_waits else (Hint(c.first_key, tr(c.word, lang), 4) for c in DECISIONS[:1])),
        Hint("t", tr("fleet_skew_key", lang), 3),
        Hint(ADD_KEY, tr("fleet_add", lang), 5),
        Hint("-/+", tr("fleet_rate_key", lang), 4),
        Hint("e", tr("fleet_enqueue", lang), 6),
        Hint("s", tr("fleet_save", lang), 6),
        Hint("1-6", tr("panels", lang), 7),
        Hint("?", tr("help", lang), 2),
        Hint("q", tr("quit", lang), 0),
    ]
