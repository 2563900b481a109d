"""The header light says the mode's harm that is not safety where it once said "safe"."""

import pytest

from core.engine.config import Mode
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
from core.scenarios.twin import header_harm
from demo.widgets.status_header import HeaderState, header_fields
from tests.scenarios.test_report import played


@pytest.mark.parametrize(
    ("name", "lang", "said"),
    [
        ("10_mistake_no_checkpoint", "en", "steps done or due again 3 (correct run: 0)"),
        ("10_mistake_no_checkpoint", "zh", "重做和待重做 3 步（正确做法 0 步）"),
        ("08_mistake_long_lease", "en", "out of reach 60 min 5 s (correct run: 35 s)"),
        ("08_mistake_long_lease", "zh", "无人可接 60 分 5 秒（正确做法 35 秒）"),
    ],
)
def test_the_header_says_the_harm_where_it_said_safe(name: str, lang: str, said: str) -> None:
    session = played(name, open_scenario(name).settings.mode)
    harm = header_harm(session, session.snapshot())
    state = HeaderState(
        title="t",
        now_ms=0,
        speed=1,
        mode=session.mode.value,
        playing=False,
        forked=False,
        dropped_script=False,
        on_their_own=False,
        violations=(),
        lang=lang,
        harm=harm,
    )
    light = "".join(f.plain for f in header_fields(state))
    assert said in light
    assert ("safe" if lang == "en" else "安全") not in light
    session.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_green_safe_while_the_redo_is_due(lang: str) -> None:
    # 01 under mistake four, at step 16: Linzhou started over from page 1 with no box, so
    # Acheng's page 2 and her refused page 3 are still to be done again; the count of steps
    # done again alone is no more than the correct run's yet
    session = Session(open_scenario("01_fog"), mode=Mode.NO_CHECKPOINT)
    while session.position < 16:
        if session.next_step() is None:
            session.reveal()
    state = HeaderState(
        title="t",
        now_ms=0,
        speed=1,
        mode=session.mode.value,
        playing=False,
        forked=False,
        dropped_script=False,
        on_their_own=False,
        violations=(),
        lang=lang,
        harm=header_harm(session, session.snapshot()),
    )
    light = "".join(f.plain for f in header_fields(state))
    said = "steps done or due again 3 (correct run: 1)" if lang == "en" else "重做和待重做 3 步"
    assert said in light
    assert ("safe" if lang == "en" else "安全") not in light
    session.close()
