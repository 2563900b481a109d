"""A run opened and closed before it was played ends quietly: closing it closes its workers'
coroutines, never started, instead of leaving each to warn that it was never awaited when it
is collected."""

import gc
import warnings

from core.scenarios.library import open_scenario
from core.scenarios.session import Session


def test_a_session_closed_unplayed_leaves_no_coroutine_unawaited() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = Session(open_scenario("02_fire_midnight_return"))
        assert not session.at_end
        session.close()
        del session
        gc.collect()
    unawaited = [w for w in caught if "was never awaited" in str(w.message)]
    assert unawaited == []
