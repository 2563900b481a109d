"""The figures page is generated from the bench's results, and the committed page is what the
committed results make. Nothing here measures anything: the results are written by hand."""

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from bench import SECTIONS
from bench.__main__ import parse_args
from bench.figures import NOTES, PAGE, load_notes, load_results, page_text, render
from bench.results import RESULTS, Figure, is_met


def figure(name: str, value: float, date: str, **changes: object) -> Figure:
    section = name.split(".")[0]
    base = Figure(
        name=name,
        section=section,
        what=f"what {name} measures",
        value=value,
        unit="x",
        target=None,
        aim=None,
        met=None,
        load=0.5,
        cpus=2,
        date=date,
        command=f"python -m bench {section}",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def write_run(folder: Path, started: str, figures: list[Figure]) -> None:
    data = {
        "started": started,
        "command": "python -m bench",
        "figures": [asdict(f) for f in figures],
    }
    (folder / f"{started.replace(':', '-')}.json").write_text(json.dumps(data))


def rows(page: str) -> dict[str, list[str]]:
    """The table rows of a page, by their first cell (the figure's sentence)."""
    found = {}
    for line in page.splitlines():
        if line.startswith("| what "):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            found[cells[0]] = cells[1:]
    return found


def test_the_page_shows_the_newest_result_of_each_figure(tmp_path: Path) -> None:
    old, new = "2026-01-01T10:00:00Z", "2026-02-01T10:00:00Z"
    write_run(
        tmp_path,
        old,
        [
            figure("store.ratio", 0.41, old, target=0.35, aim="at least", met=True),
            figure("sim.hour", 0.2, old, unit="s", target=1.0, aim="under", met=True),
        ],
    )
    write_run(
        tmp_path,
        new,
        [
            figure("store.ratio", 0.3, new, target=0.35, aim="at least", met=False, load=9.3),
            figure("tui.p90", 21.0, new, unit="ms", command="python -m bench tui --quick"),
        ],
    )
    notes = {"store.ratio": "both sides write the same event rows"}
    page = render(load_results(tmp_path), notes)
    table = rows(page)
    # The newer run's ratio replaces the older one; the hour, measured once, stays.
    assert table["what store.ratio measures"] == [
        "**0.3×**",
        "at least 0.35×",
        "**not met**",
        "**9.3**",  # above the two cores: marked
        "2026-02-01 10:00",
        "`python -m bench store`",
    ]
    assert table["what sim.hour measures"][:4] == ["**0.2 s**", "under 1 s", "met", "0.5"]
    assert table["what tui.p90 measures"][1:3] == ["", ""]  # no target, no verdict
    assert table["what tui.p90 measures"][-1] == "`python -m bench tui --quick`"
    assert len(table) == 3
    # Sections in the order `python -m bench` runs them, each under its heading.
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert headings == [f"## {s}: {SECTIONS[s][0]}" for s in ("store", "tui", "sim")]
    assert "- what store.ratio measures: both sides write the same event rows" in page
    assert "marked by their load" in page


def test_a_target_is_met_as_its_aim_says() -> None:
    assert is_met(0.35, "at least", 0.35) is True
    assert is_met(1.0, "under", 1.0) is False
    assert is_met(1.5, "at most", 1.5) is True
    assert is_met(3.0, None, None) is None


def test_the_committed_page_is_what_the_committed_results_make() -> None:
    assert PAGE.read_text() == page_text(RESULTS, NOTES), (
        "docs/figures.md is stale: run `python -m bench.figures`"
    )


def test_the_notes_name_sections_and_carry_no_number() -> None:
    """A number written by hand beside a figure goes stale: only the results carry them.
    (The keys are figure names, `section.what`, and may hold digits.)"""
    notes = load_notes()
    assert notes
    for name, text in notes.items():
        assert name.split(".")[0] in SECTIONS, name
        assert not any(ch.isdigit() for ch in text), f"{name}: {text}"


def test_the_command_line_lists_and_picks_sections(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_help:
        parse_args(["--help"])
    assert exit_help.value.code == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name in SECTIONS)
    assert parse_args(["tui", "sim", "--quick"]).sections == ["tui", "sim"]
    with pytest.raises(SystemExit) as bad:
        parse_args(["nonesuch"])
    assert bad.value.code == 2
    assert "no section named nonesuch" in capsys.readouterr().err


def test_a_run_writes_each_figure_as_it_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped halfway keeps what it measured: the file is written at every record."""
    import bench.results as results

    monkeypatch.setattr(results, "_run", results._run)
    monkeypatch.setattr(results, "_quick", False)
    path = results.start_run("python -m bench sim --quick", quick=True, folder=tmp_path)
    results.record("sim", "hour", "one hour", 0.5, "s", target=1.0, aim="under")
    first = results.read(path)
    assert [(f.name, f.value, f.met, f.command) for f in first] == [
        ("sim.hour", 0.5, True, "python -m bench sim --quick")
    ]
    assert first[0].load >= 0 and first[0].cpus >= 1
    results.record("sim", "call", "one call", 130, "us", command="borrowed-keys x")
    assert [f.name for f in results.read(path)] == ["sim.hour", "sim.call"]
    assert results.read(path)[1].command == "borrowed-keys x"


def test_a_target_met_under_load_is_not_claimed(tmp_path: Path) -> None:
    day = "2026-03-01T10:00:00Z"
    write_run(
        tmp_path,
        day,
        [
            figure("store.ratio", 0.5, day, target=0.35, aim="at least", met=True, load=1.2),
            figure("sim.hour", 0.2, day, unit="s", target=1.0, aim="under", met=True, load=7.5),
            figure("tui.p90", 40.0, day, unit="ms", target=33.0, aim="under", met=False, load=7.5),
        ],
    )
    table = rows(render(load_results(tmp_path), {}))
    assert table["what store.ratio measures"][2] == "met"
    # Met while five more processes than cores waited: shown, never claimed.
    assert table["what sim.hour measures"][2] == "met under load, not claimed"
    # A miss is a miss, load or not.
    assert table["what tui.p90 measures"][2] == "**not met**"


def test_verify_takes_only_claimed_figures_and_says_which_no_longer_hold(tmp_path: Path) -> None:
    from bench.__main__ import claimed, verdicts, verify_line

    day, later = "2026-03-01T10:00:00Z", "2026-03-02T10:00:00Z"
    before = [
        figure("store.ratio", 0.5, day, target=0.35, aim="at least", met=True),
        figure("sim.hour", 0.2, day, unit="s", target=1.0, aim="under", met=True, load=7.5),
        figure("tui.p90", 40.0, day, unit="ms", target=33.0, aim="under", met=False),
        figure("chaos.rate", 9.0, day, unit="per s"),
        figure("export.wall", 3.0, day, unit="s", target=8.0, aim="under", met=True),
    ]
    claims = claimed(before, [])
    assert [f.name for f in claims] == ["store.ratio", "export.wall"]
    assert [f.name for f in claimed(before, ["store"])] == ["store.ratio"]
    after = [figure("store.ratio", 0.3, later, target=0.35, aim="at least", met=False)]
    lines = [verify_line(old, new) for old, new in verdicts(claims, after)]
    assert lines[0].startswith("no longer holds") and "0.3 x (at least 0.35)" in lines[0]
    assert lines[1].startswith("not measured again")
    held = verify_line(
        claims[0], figure("store.ratio", 0.4, later, target=0.35, aim="at least", met=True)
    )
    assert held.startswith("holds")


def test_verify_is_an_option() -> None:
    assert parse_args(["--verify"]).verify is True
    assert parse_args([]).verify is False
