"""`borrowed-keys explore` (and `chaos`) on the command line: a bad --out, an empty result,
an option argparse refuses and Ctrl-C are each one line and an exit status, with nothing
half-written and nothing empty left behind; the written files do not depend on the hash
seed."""

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.engine.config import Mode
from core.scenarios import writer
from core.search.explore import bfs as ex
from core.search.explore import pool as explore_pool
from core.search.explore.bfs import ExploreParams
from core.search.explore.story import write_counterexamples
from core.tools.cli import main
from core.tools.options import out_dir_problem

ROOT = Path(__file__).resolve().parents[2]


def _never(*args: Any, **kw: Any) -> Any:
    raise AssertionError("the search started")


@pytest.mark.parametrize("command", ["explore", "chaos"])
def test_an_out_that_is_a_file_is_one_line_before_any_work(
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    monkeypatch.setattr("core.tools.explore_cli.explore", _never)
    monkeypatch.setattr("core.tools.chaos_cli.run_chaos", _never)
    assert main([command, "--out", str(afile)]) == 2
    err = capsys.readouterr().err
    assert err == f"borrowed-keys {command}: --out {afile}: {afile} is not a folder\n"
    assert afile.read_text() == "mine"


def test_an_out_that_cannot_be_made_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.tools.explore_cli.explore", _never)
    assert main(["explore", "--mode", "no_fencing", "--depth", "3", "--out", "/proc/nope"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("borrowed-keys explore: --out /proc/nope: ")


def test_a_folder_inside_a_file_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    assert out_dir_problem(tmp_path / "afile" / "deeper") is not None
    assert out_dir_problem(tmp_path / "new" / "deeper") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # the try left nothing


def test_a_run_that_finds_nothing_makes_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o1"
    assert main(["explore", "--depth", "3", "--out", str(out)]) == 0
    assert "no violation" in capsys.readouterr().out
    assert not out.exists()


def test_max_states_bounds_a_large_world_and_says_it_is_not_exhausted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explore", "--workers", "4", "--tasks", "4", "--steps", "6", "--max-states", "40"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "stopped at 40 states (--max-states), not exhausted" in out
    assert "40 distinct states" in out


def test_the_folder_is_made_for_the_first_file(tmp_path: Path) -> None:
    params = ExploreParams(mode=Mode.NO_IDEMPOTENCY, depth=4)
    report = ex.explore(params)
    out = tmp_path / "a" / "b"
    assert write_counterexamples(params, [], out) == []
    assert not (tmp_path / "a").exists()
    written = write_counterexamples(params, report.counterexamples, out)
    assert [Path(c.path or "").name for c in written] == [
        "explore-no_idempotency-duplicate_effect.toml"
    ]
    assert [p.name for p in out.iterdir()] == ["explore-no_idempotency-duplicate_effect.toml"]


def test_a_write_stopped_half_way_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C between writing and naming the file: no file, no temporary, no new folder."""

    def interrupted(src: Any, dst: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        writer.write_whole(tmp_path / "new" / "x.toml", "text")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    with pytest.raises(KeyboardInterrupt):
        writer.write_whole(tmp_path / "kept" / "x.toml", "text")
    assert list((tmp_path / "kept").iterdir()) == []


# -- options argparse refuses: one line, exit 2 -----------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["explore", "--mode", "nope"], "argument --mode: invalid choice: 'nope'"),
        (["explore", "--workers", "x"], "argument --workers: invalid int value: 'x'"),
        (
            ["explore", "--mode", "correct", "--all-modes"],
            "argument --all-modes: not allowed with argument --mode",
        ),
        (["explore", "--bogus"], "unrecognized arguments: --bogus"),
        (["chaos", "--mode", "nope"], "argument --mode: invalid choice: 'nope'"),
        (["chaos", "--runs", "x"], "argument --runs: invalid int value: 'x'"),
        (["play"], "the following arguments are required: FILE"),
        (["play", "01_fog", "--lang", "fr"], "argument --lang: invalid choice: 'fr'"),
        (["check"], "the following arguments are required: FILE"),
        (["list", "--lang", "fr"], "argument --lang: invalid choice: 'fr'"),
        (["sql", "--mode", "nope"], "argument --mode: invalid choice: 'nope'"),
        (["worker", "--ttl"], "argument --ttl: expected one argument"),
        (["enqueue"], "the following arguments are required: --db, --task"),
        (["tui", "--mode", "nope"], "argument --mode: invalid choice: 'nope'"),
        (["serve", "--port", "x"], "argument --port: invalid int value: 'x'"),
        (["export", "--size", "80"], "argument --size"),
    ],
)
def test_an_option_argparse_refuses_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from demo.cli import main as console_main

    with pytest.raises(SystemExit) as stop:
        console_main(argv)
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"borrowed-keys {argv[0]}: {says}")
    assert lines[0].endswith(" (see --help)")


def test_an_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["nosuch"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("borrowed-keys: argument COMMAND: invalid choice")


# -- Ctrl-C -----------------------------------------------------------------------------------


def _interrupt(*args: Any, **kw: Any) -> Any:
    raise KeyboardInterrupt


def test_ctrl_c_during_the_search_is_one_line_and_exit_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.tools.explore_cli.explore", _interrupt)
    out = tmp_path / "out"
    assert main(["explore", "--mode", "no_fencing", "--depth", "3", "--out", str(out)]) == 130
    captured = capsys.readouterr()
    assert captured.err == "borrowed-keys explore: interrupted: nothing written\n"
    assert captured.out == ""
    assert not out.exists()


def test_ctrl_c_after_a_mode_was_written_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --all-modes the modes searched to the end have their whole files; the line
    says how many, and nothing else is there."""
    run = ex.explore

    def until_seed_sql(params: ExploreParams, **kw: Any) -> ex.ExploreReport:
        if params.mode is Mode.SEED_SQL:
            raise KeyboardInterrupt
        return run(params, **kw)

    monkeypatch.setattr("core.tools.explore_cli.explore", until_seed_sql)
    out = tmp_path / "out"
    assert main(["explore", "--all-modes", "--depth", "3", "--out", str(out)]) == 130
    err = capsys.readouterr().err.splitlines()[-1]
    files = sorted(p.name for p in out.iterdir())
    # Before seed_sql come correct, no_expiry, ..., no_fencing, ..., client_clock and
    # no_idempotency: at depth 3 their rules are broken.
    assert files == [
        "explore-client_clock-double_owner.toml",
        "explore-no_expiry-stuck_task.toml",
        "explore-no_fencing-page_without_live_lease.toml",
        "explore-no_idempotency-duplicate_effect.toml",
    ]
    assert err == (
        f"borrowed-keys explore: interrupted: 4 whole file(s) written to {out}, of the "
        "modes searched to the end"
    )


def test_ctrl_c_with_jobs_ends_every_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jobs are running when Ctrl-C comes: none is left behind."""
    started: list[int] = []
    expand = explore_pool.Expander.expand

    def once_started(self: explore_pool.Expander) -> Any:
        started.append(len(multiprocessing.active_children()))
        if len(started) == 2:
            raise KeyboardInterrupt
        return expand(self)

    monkeypatch.setattr(explore_pool.Expander, "expand", once_started)
    out = tmp_path / "out"
    argv = ["explore", "--mode", "no_fencing", "--depth", "3", "--jobs", "2", "--out", str(out)]
    assert main(argv) == 130
    assert started == [2, 2]
    assert multiprocessing.active_children() == []
    err = capsys.readouterr().err.splitlines()  # the progress lines, then the one line
    assert err[-1] == "borrowed-keys explore: interrupted: nothing written"
    assert all(line.startswith("explore ") for line in err[:-1])
    assert not out.exists()


def test_ctrl_c_during_chaos_is_one_line_and_exit_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.tools.chaos_cli.run_chaos", _interrupt)
    out = tmp_path / "out"
    assert main(["chaos", "--runs", "3", "--out", str(out)]) == 130
    # rich's progress (off here: not a terminal) ends with an empty line at the lowest
    # declared rich; the one line said is the same
    said = capsys.readouterr().err.lstrip("\n")
    assert said == "borrowed-keys chaos: interrupted: nothing written\n"
    assert not out.exists()


def test_ctrl_c_during_chaos_with_jobs_ends_the_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.search.fuzz import pool
    from core.tools import chaos_cli

    seen: list[int] = []
    real = pool.run_chaos

    def interrupted_after_a_run(*args: Any, **kw: Any) -> Any:
        tick = kw["on_progress"]

        def stop(result: Any) -> None:
            tick(result)
            seen.append(len(multiprocessing.active_children()))
            raise KeyboardInterrupt

        return real(*args, **dict(kw, on_progress=stop))

    monkeypatch.setattr(chaos_cli, "run_chaos", interrupted_after_a_run)
    out = tmp_path / "out"
    assert main(["chaos", "--runs", "8", "--jobs", "2", "--out", str(out)]) == 130
    assert seen == [2]  # the pool was running
    assert multiprocessing.active_children() == []
    # rich's progress (off here: not a terminal) ends with an empty line at the lowest
    # declared rich; the one line said is the same
    said = capsys.readouterr().err.lstrip("\n")
    assert said == "borrowed-keys chaos: interrupted: nothing written\n"
    assert not out.exists()


# -- the hash seed ----------------------------------------------------------------------------


def _run_in(folder: Path, hash_seed: str) -> tuple[bytes, dict[str, bytes]]:
    folder.mkdir()
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "core.tools.explore_cli", "explore", "--all-modes"]
    done = subprocess.run(
        [*argv, "--depth", "4", "--out", "out", "--json"],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr.decode()
    files = {p.name: p.read_bytes() for p in sorted((folder / "out").iterdir())}
    return done.stdout, files


def test_the_files_and_the_summary_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Two processes with different string hashes: an order taken from a set or a hash
    would show here as different bytes (one process alone hashes alike every time)."""
    out_a, files_a = _run_in(tmp_path / "a", "1")
    out_b, files_b = _run_in(tmp_path / "b", "4")
    assert len(files_a) >= 8
    assert out_a == out_b
    assert files_a == files_b
    summary = json.loads(out_a)
    written = {Path(c["path"]).name for s in summary for c in s["counterexamples"]}
    assert written == set(files_a)


# -- the docs ---------------------------------------------------------------------------------


def test_the_docs_name_every_explore_option_and_link_each_mode_to_its_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import re

    with pytest.raises(SystemExit):
        main(["explore", "--help"])
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out)) - {"--help"}
    assert {"--json", "--out", "--no-memo", "--all-modes"} <= options
    app = (ROOT / "docs" / "app.md").read_text("utf-8")
    row = next(line for line in app.splitlines() if line.startswith("| `borrowed-keys explore"))
    assert {o for o in options if o not in row} == set()
    table = [line for line in app.splitlines() if line.startswith("| `") and "` | " in line]
    modes = {line.split("`")[1]: line for line in table if line.split("`")[1] in set(Mode)}
    assert set(modes) == set(Mode)
    assert all(
        line.rstrip(" |").endswith("(explore.md#results-by-mode)") for line in modes.values()
    )
    readme = (ROOT / "README.md").read_text("utf-8")
    intro = readme[: readme.index("## Try it")]
    assert "five common mistakes" in intro and "(docs/explore.md#results-by-mode)" in intro
    assert "## Results by mode" in (ROOT / "docs" / "explore.md").read_text("utf-8")
