"""`borrowed-keys export RUN.jsonl`: a saved fleet run as a page with the fleet screen drawn
at the moments that matter, from the frames the run saved, in both languages, offline.

One export of the recorded run (tests/fleet_runs/stalled_run.jsonl: w1 stalled past its
expiry, w2 claims, w1 resumed and refused as fenced, w2 completes) in both languages.
"""

import html
import re
from pathlib import Path

import pytest

from core.engine.people import called
from core.fleet.history import SavedRun, load_history
from demo.export.cli import main as export_main
from demo.export.fleet_frames import moments
from demo.i18n import tr
from demo.widgets.panels import key_words
from demo.widgets.timeline_view import clock

RUNS = Path(__file__).parents[1] / "fleet_runs"
RECORDED = RUNS / "stalled_run.jsonl"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("fleet-page")
    assert export_main([str(RECORDED), "--out", str(out), "--lang", "both"]) == 0
    return (out / "index.html").read_text(encoding="utf-8")


def _screens(page: str, lang: str) -> list[str]:
    """The text of each screen on the page in `lang`, in order."""
    mark = "The fleet screen at" if lang == "en" else "时的机群画面"
    figures = re.findall(r'<figure class="frame" aria-label="([^"]*)".*?</figure>', page, re.DOTALL)
    bodies = re.findall(r'<figure class="frame" aria-label="[^"]*".*?</figure>', page, re.DOTALL)
    return [
        html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")
        for label, body in zip(figures, bodies, strict=True)
        if mark in label
    ]


def test_the_fleet_page_plays_its_moments_as_a_scenario_page_does(page: str) -> None:
    """One moment on screen at a time, in the scenario page's player: its buttons, its
    script, both languages, a slider over the moments, the timeline beside each screen."""
    from demo.export.page import SCRIPT

    steps = re.findall(r'<section class="step" id="step-(\d+)">', page)
    assert steps == [str(k) for k in range(len(steps))] and len(steps) == 3
    assert SCRIPT in page  # the very player of a scenario's page
    for cls in ("prev", "play", "next", "lang"):
        assert f'<button class="{cls}"' in page
    assert '<input class="slider" type="range" min="0" max="2"' in page
    assert 'data-total="2"' in page and 'data-langs=\'["en", "zh"]\'' in page
    for section in re.findall(r'<section class="step".*?</section>', page, re.DOTALL):
        assert section.count('data-l="en"') == 1 and section.count('data-l="zh"') == 1
        assert section.count('<div class="pair"><figure class="frame"') == 2
        assert section.count('<div class="belief">') == 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_the_fleet_screen_at_each_moment_that_matters(page: str, lang: str) -> None:
    run: SavedRun = load_history(RECORDED)
    stops = moments(run, run.check(), lang)
    # the stall; the resume with the refusal it led to (one frame read them both); the end
    assert len(stops) == 3 and stops[-1].end
    screens = _screens(page, lang)
    assert len(screens) == len(stops)
    for text, stop in zip(screens, stops, strict=True):
        frame = run.frame_at(stop.at)
        assert frame is not None
        # each pane's title, with the pid the process had then (or how it ended)
        for wid, pid in frame.pids.items():
            said = tr("fleet_pid", lang, pid=pid)
            if wid in frame.exit_status:
                said = tr("fleet_exited", lang, status=frame.exit_status[wid])
            assert f"{called(wid, lang)} · {said}" in text, (wid, said, stop)
        assert tr("fleet_title", lang, n=2) in text
    # the refusal's frame opens the Rejected panel; the end, the ledger as it stood then
    refused = next(ev for ev in run.events if ev.event == "write_rejected")
    assert tr("rejected", lang) in screens[1]
    assert clock(refused.at - run.origin) in screens[1]  # its row in the Rejected panel
    end = run.frame_at(stops[-1].at)
    assert end is not None and len(end.snap.ledger) == 4
    assert set(end.exit_status) == {"w1", "w2"}  # the run ended by stopping both
    for row in end.snap.ledger:  # each page, as the ledger showed it then
        key = key_words(row.key, row.task_id, lang)  # "任务 1/1" on a Chinese screen
        assert re.search(rf"{re.escape(key)} +\S", screens[-1]), row
    assert end.snap.ledger[-1].key not in screens[0]  # not written yet at the stall


def test_the_fleet_page_is_offline_and_zooms(page: str) -> None:
    assert set(re.findall(r"https?://[^\s\"')]+", page)) == {"http://www.w3.org/2000/svg"}
    assert not re.search(r"url\(\s*[\"']?(https?:|//)", page)
    assert "<script src" not in page and '<link rel="stylesheet"' not in page
    assert "zoomed" in page and "Click a screen to zoom in" in page and "点画面放大" in page
    assert len(page.encode()) < 400_000  # six screens


def test_a_run_saved_without_frames_still_makes_a_page_without_screens(tmp_path: Path) -> None:
    assert export_main([str(RUNS / "stalled.jsonl"), "--out", str(tmp_path), "--lang", "en"]) == 0
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert '<figure class="frame"' not in page and "without the screen" in page


def test_a_stale_page_accepted_is_a_moment_the_page_stops_at(tmp_path: Path) -> None:
    """w1's refused page planted as accepted: the check finds it, and the page stops there
    with the ledger open, in both languages."""
    lines = RECORDED.read_text().splitlines()
    n = next(k for k, raw in enumerate(lines) if '"event": "write_rejected"' in raw)
    lines[n] = lines[n].replace('"write_rejected"', '"write_accepted"').replace('"fenced"', "null")
    planted = tmp_path / "stale.jsonl"
    planted.write_text("\n".join(lines) + "\n")
    run = load_history(planted)
    check = run.check()
    assert check.findings
    for lang, words in (("en", "no longer the current one"), ("zh", "已不是当前租约")):
        stale = [m for m in moments(run, check, lang) if m.panel == "tab-ledger" and not m.end]
        assert stale and any(words in said for said in stale[0].said), stale
