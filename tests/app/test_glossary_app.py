"""The transcript, the app and the help page say a thing in the same words."""

from core.scenarios import glossary
from core.scenarios.player import event_label, reason_label, render_line
from demo import i18n
from demo.screens.help import help_renderable


def test_the_transcript_the_app_and_the_help_agree() -> None:
    fence = glossary.token_word("fence", "zh")
    lease = glossary.token_word("lease", "zh")
    assert fence == "围栏令牌" and lease == "租约号"
    assert i18n.tr("fence", "zh") == i18n.tr("fence_token", "zh") == fence
    assert i18n.tr("lease_token", "zh") == lease
    assert i18n.tr("worker", "zh") == "执行者" and "执行者" in i18n.tr("add_worker", "zh")
    event = {"type": "event", "t": 1.0, "event": "write_rejected", "task": "t", "worker": "w"}
    event |= {"lease_token": 1, "fence_token": 1, "reason": "fenced", "detail": {}}
    event |= {"event": "claimed", "detail": {"attempt": 1}}
    line = "".join(text for text, _ in render_line(event, "zh"))
    assert f"{lease} 1" in line and f"{fence} 1" in line
    refused = {**event, "event": "write_rejected", "detail": {"operation": "write"}}
    assert glossary.reason_word("fenced", "zh") in "".join(t for t, _ in render_line(refused, "zh"))
    for name in glossary.EVENTS:
        assert event_label(name, "zh") == i18n.event_word(name, "zh")
    for name in glossary.REASONS:
        assert reason_label(name, "zh") == i18n.reason_word(name, "zh")
    # the help page names the columns and panels as the screen does
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(help_renderable("zh"))
    shown = console.export_text()
    for word in (fence, lease, i18n.tr("ledger", "zh"), i18n.tr("expires_in", "zh")):
        assert word in shown
