"""A fleet worker stopped with its downstream write on its way out says so in its pane, in
the reader's language (the words come from the fleet's word table), and so does one a
stall waits for, until that write is on its way out."""

from typing import Any, cast

import pytest

from core.sim.snapshot import WorkerView
from core.sim.spec import WorkerState
from demo.widgets.worker_pane import PaneState, WorkerPane


def _head(write_held: bool, lang: str, stopping: bool = False) -> str:
    view = WorkerView(
        id="acheng",
        state=WorkerState.STALLED,
        autopilot=True,
        task_id="t1",
        step=2,
        lease_token=1,
        fence_token=3,
        believed_remaining_ms=500,
        store_remaining_ms=-1,
        heartbeat_age_ms=None,
        stalled=True,
        write_held=write_held,
        stopping_at_write=stopping,
    )
    pane = PaneState(view, None, 2000, 666, 1333, 2, client_clock=False, lang=lang)
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
