"""The header light says the mode's harm that is not safety where it once said "safe"."""

import pytest

from core.scenarios.library import open_scenario
from core.scenarios.twin import header_harm
from demo.widgets.status_header import HeaderState, header_fields
from tests.scenarios.test_report import played


@pytest.mark.parametrize(
    ("name", "lang", "said"),
    [
        ("10_mistake_no_checkpoint", "en", "steps done again 3 (correct run: 0)"),
        ("10_mistake_no_checkpoint", "zh", "重做 3 步（正确做法 0 步）"),
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
