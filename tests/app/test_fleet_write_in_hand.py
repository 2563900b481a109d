"""A fleet worker stopped with its downstream write on its way out says so in its pane, in
the reader's language (the words come from the fleet's word table), and so does one a
stall waits for, until that write is on its way out."""

from typing import Any, cast

import pytest

from core.sim.snapshot import LateWrite, WorkerView
from core.sim.spec import WorkerState
from demo.widgets.worker_pane import PaneState, WorkerPane


def _head(
    write_held: bool,
    lang: str,
    stopping: bool = False,
    late: LateWrite | None = None,
    compact: bool = False,
) -> str:
    view = WorkerView(
        id="acheng",
        state=WorkerState.WORKING if late else WorkerState.STALLED,
        autopilot=True,
        task_id="t1",
        step=2,
        lease_token=1,
        fence_token=3,
        believed_remaining_ms=500,
        store_remaining_ms=-1,
        heartbeat_age_ms=None,
        stalled=late is None,
        write_held=write_held,
        stopping_at_write=stopping,
        late_write=late,
    )
    pane = PaneState(view, None, 2000, 666, 1333, 2, client_clock=False, lang=lang, compact=compact)
    return WorkerPane._head(cast(Any, None), view, pane).plain


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "stopped with its write in hand"), ("zh", "停住时手里还拿着写入")]
)
def test_a_stalled_pane_says_it_holds_its_write_only_when_it_does(lang: str, said: str) -> None:
    assert said in _head(True, lang)
    assert said not in _head(False, lang)


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "to stop at its next write"), ("zh", "将停在下一次写入前")]
)
def test_a_stall_waiting_for_the_write_says_so_until_the_write_is_in_hand(
    lang: str, said: str
) -> None:
    assert said in _head(False, lang, stopping=True)  # `z` pressed: it works on, to stop soon
    assert said not in _head(False, lang)
    held = _head(True, lang, stopping=True)  # stopped with it: the one flag that is true now
    assert said not in held


@pytest.mark.parametrize(
    ("lang", "refused", "taken"),
    [
        (
            "en",
            "its late write to t1/result refused by the service: fence token 3 < 5",
            "its late write to t1/result taken by the service over fence token 5",
        ),
        (
            "zh",
            "它迟到的写入（t1/result）被下游服务拒绝：围栏令牌 3 < 5",
            "下游服务收下了它迟到的写入（t1/result），盖过了围栏令牌 5",
        ),
    ],
)
def test_a_resumed_pane_says_what_the_service_answered_its_late_write(
    lang: str, refused: str, taken: str
) -> None:
    """The stall's punchline where the pane said it held the write: refused by the fence,
    or (no_fencing) taken over the newer token; nothing once the answer is old."""
    fenced = LateWrite("t1/result", 3, 5, taken=False, error="stale_token")
    unfenced = LateWrite("t1/result", 3, 5, taken=True)
    assert refused in _head(False, lang, late=fenced)
    assert taken in _head(False, lang, late=unfenced)
    assert refused not in _head(False, lang) and taken not in _head(False, lang)


@pytest.mark.parametrize(
    ("lang", "said"),
    [("en", "late write refused: fence token 3 < 5"), ("zh", "迟到的写入被拒：围栏令牌 3 < 5")],
)
def test_a_compact_pane_says_it_short_on_a_line_of_its_own(lang: str, said: str) -> None:
    """A half-width pane (80 x 24) has no room for the sentence beside its state."""
    head = _head(False, lang, late=LateWrite("t1/result", 3, 5, False, "stale_token"), compact=True)
    assert said in head.splitlines()
