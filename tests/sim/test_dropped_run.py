"""A run dropped before it was played ends quietly: its workers' coroutines, never started,
are closed with it instead of each warning that it was never awaited."""

import gc
import warnings

from core.scenarios.library import open_scenario
from core.scenarios.session import Session


def test_a_session_opened_and_dropped_leaves_no_coroutine_unawaited() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = Session(open_scenario("02_fire_midnight_return"))
        assert not session.at_end
        del session
        gc.collect()
    unawaited = [w for w in caught if "was never awaited" in str(w.message)]
    assert unawaited == []
