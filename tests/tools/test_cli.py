"""The headless CLI, called in-process: play, check, list, exit codes, JSON determinism."""

import json
from argparse import Namespace
from pathlib import Path

import pytest

import core.scenarios.library
import core.tools.cli
from demo.cli import main

HERE = Path(__file__).parents[1]
FOG = HERE / "scenarios_ok" / "fog.toml"
MANUAL = HERE / "scenarios_ok" / "manual.toml"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", [FOG, MANUAL], ids=["fog", "manual"])
def test_play_passes(path: Path, lang: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["play", str(path), "--lang", lang], capsys)
    assert code == 0, out
    assert err == ""
    assert "\x1b[" not in out  # plain when not a terminal
    assert ("passed: " if lang == "en" else "通过：") in out


def test_play_transcript_shape(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _err = run(["play", str(FOG)], capsys)
    lines = out.splitlines()
    assert lines[0] == "The fog: a frozen heartbeat"
    assert "Step 1 · 0:00:00.000  → 1 s pass" in lines
    assert "  Acheng claims the sixth floor." in lines
    assert "  0:00:00.000  Acheng claims sixth-floor (lease token 1, fence token 1)" in lines
    assert "  ✓ pass  sixth-floor is running, held by Acheng, fence token 1" in lines
    assert not any("{" in line for line in lines)  # the checks read as sentences


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_play_says_each_check_as_the_app_does(
    lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.scenarios.format import load_scenario
    from core.scenarios.session import Session
    from demo.widgets.narration import narration_text

    scenario = load_scenario(FOG)
    _code, out, _err = run(["play", str(FOG), "--lang", lang], capsys)
    checks = [line.split("  ", 2)[2] for line in out.splitlines() if line.startswith("  ✓")]
    assert len(checks) == sum(len(step.expects) for step in scenario.steps) == 4
    session = Session(scenario)
    shown: list[str] = []
    for _ in scenario.steps:
        session.next_step()
        shown += narration_text(session, lang).plain.splitlines()
    for check in checks:  # the app's narration has the same sentence, word for word
        assert any(line.endswith(f"✓ {check}") for line in shown), (check, shown)


def test_play_toml_prints_each_check_in_the_files_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _code, out, _err = run(["play", str(FOG), "--toml"], capsys)
    lines = out.splitlines()
    assert any(line.startswith('  ✓ pass  { task = "sixth-floor"') for line in lines)
    assert "  ✓ pass  sixth-floor is running, held by Acheng, fence token 1" not in lines


def test_a_failed_check_is_a_sentence_with_what_was_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "f.toml"
    path.write_text(
        FOG.read_text("utf-8").replace(
            'owner = "acheng", fence_token = 1', 'owner = "linzhou", fence_token = 1'
        ),
        encoding="utf-8",
    )
    code, out, _err = run(["play", str(path), "--lang", "zh"], capsys)
    assert code == 1
    lines = out.splitlines()
    failed = lines.index("  ✗ 未通过  sixth-floor 运行中，由临舟持有，围栏令牌 1")
    # what the run has instead, in words: the key it got wrong
    assert lines[failed + 1] == "      实际：sixth-floor：由阿澄持有"


def test_play_zh_uses_glossary_words(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _err = run(["play", str(FOG), "--lang", "zh"], capsys)
    assert "起雾：心跳冻结" in out and "阿澄借走了第六层的钥匙。" in out
    assert "阿澄领到 sixth-floor（租约号 1，围栏令牌 1）" in out and "第1步" in out


def test_json_lines_are_byte_identical_across_runs(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(["play", str(FOG), "--json"], capsys)[1]
    second = run(["play", str(FOG), "--json"], capsys)[1]
    assert first == second
    records = [json.loads(line) for line in first.splitlines()]
    # `books`: a page the fence refused, and what it would have written
    assert {r["type"] for r in records} == {
        "scenario",
        "event",
        "step",
        "expect",
        "books",
        "summary",
    }
    event = next(r for r in records if r["type"] == "event")
    assert {"event", "t", "task", "worker", "lease_token", "fence_token", "reason"} <= set(event)
    assert records[-1]["type"] == "summary"
    assert records[-1]["passed"] == 4 and records[-1]["failed"] == 0
    check = next(r for r in records if r["type"] == "expect")
    assert check["expect"].startswith('{ task = "sixth-floor"')  # the file's form
    assert check["said"] == "sixth-floor is running, held by Acheng, fence token 1"


def test_failed_expectation_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fail.toml"
    path.write_text(
        FOG.read_text(encoding="utf-8").replace('owner = "acheng"', 'owner = "linzhou"'),
        encoding="utf-8",
    )
    code, out, _err = run(["play", str(path)], capsys)
    assert code == 1
    assert "  ✗ FAIL  sixth-floor is running, held by Linzhou, fence token 1\n" in out
    assert "      found: sixth-floor: held by Acheng\n" in out
    _code, out, _err = run(["play", str(path), "--toml"], capsys)
    assert '      found: status = "running", owner = "acheng", fence_token = 1' in out
    assert '✗ FAIL  { task = "sixth-floor", status = "running", owner = "linzhou"' in out
    code, out, _err = run(["play", str(path), "--json"], capsys)
    assert code == 1 and '"ok": false' in out


def test_step_that_cannot_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.toml"
    path.write_text(
        'title = "t"\n[[workers]]\nid = "m"\nautopilot = false\n'
        '[[step]]\ndo = "heartbeat"\nworker = "m"\n',
        encoding="utf-8",
    )
    code, _out, err = run(["play", str(path)], capsys)
    assert code == 2
    assert err.startswith(f"{path}:6: step 1 cannot run: ") and err.count("\n") == 1


def test_check_prints_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.toml"
    path.write_text('title = "t"\nheartbeat_every = "35s"\nrenew_deadline = "50s"\n')
    code, out, err = run(["check", str(path)], capsys)
    assert code == 0
    assert out == f"{path}: ok (0 steps, 0 expectations)\n"
    assert err.startswith(f"{path}:2: warning: heartbeat_every (35s) is more than half")


def test_list_and_play_by_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "01_fog.toml").write_bytes(FOG.read_bytes())
    (lib / "02_broken.toml").write_text("title = 3\n")
    monkeypatch.setattr(core.scenarios.library, "bundled_files", lambda: sorted(lib.iterdir()))
    code, out, _err = run(["list"], capsys)
    assert code == 0
    assert out.splitlines() == [
        "01_fog     The fog: a frozen heartbeat",
        "02_broken  (cannot be played: title must be a string, got an integer)",
    ]
    listed_zh = run(["list", "--lang", "zh"], capsys)[1]
    assert listed_zh.startswith("01_fog     起雾：心跳冻结")
    broken_zh = listed_zh.splitlines()[1]
    assert broken_zh.startswith("02_broken  （无法播放：") and "cannot" not in broken_zh
    monkeypatch.chdir(tmp_path)
    code, out, _err = run(["play", "01_fog", "--json"], capsys)
    assert code == 0 and out.startswith('{"type": "scenario", "title": "The fog')
    code, _out, err = run(["play", "02_broken.toml"], capsys)
    assert (
        code == 2 and err == "scenarios/02_broken.toml:1: title must be a string, got an integer\n"
    )


def test_real_bundled_library_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(["list"], capsys)
    assert code == 0
    for f in core.scenarios.library.bundled_files():
        assert f.name.removesuffix(".toml") in out


def test_options_alone_open_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    import demo.app

    opened: list[tuple[str | None, str | None, bool]] = []

    def run_app(args: Namespace) -> int:
        opened.append((args.file, args.lang, args.sandbox))
        return 0

    monkeypatch.setattr(demo.app, "run_app", run_app)
    assert main(["--lang", "zh"]) == 0
    assert main(["tui", "01_fog"]) == 0
    assert main([]) == 0
    assert main(["--sandbox"]) == 0
    assert opened == [
        (None, "zh", False),
        ("01_fog", None, False),
        (None, None, False),
        (None, None, True),
    ]


def test_tui_db_is_the_apps_setting_handed_to_each_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """`tui --db URL` is where the app's runs keep their store: a setting of the app, handed
    to every session it opens, not a default moved for the whole process."""
    import demo.app
    import demo.cli
    from core.sim.simulation import IN_MEMORY

    url = "postgresql://keeper@nowhere/runs"
    apps: list[demo.app.BorrowedKeysApp] = []
    monkeypatch.setattr(demo.cli, "db_problem", lambda args, command: False)  # no server here
    monkeypatch.setattr(demo.app.BorrowedKeysApp, "run", lambda self: apps.append(self) or 0)
    assert main(["tui", "--db", url]) == 0
    assert main(["tui"]) == 0
    assert [app.database for app in apps] == [url, IN_MEMORY]

    class Opened(Exception):
        pass

    asked: list[str] = []

    def session(*args: object, database: str, **kw: object) -> None:
        asked.append(database)
        raise Opened

    import core.scenarios.session

    monkeypatch.setattr(core.scenarios.session, "Session", session)
    for app in apps:
        with pytest.raises(Opened):
            app.open_session(None)
    assert asked == [url, IN_MEMORY]


def test_python_m_demo_opens_the_app_with_its_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m demo FILE --lang zh` (what every browser tab of `serve` runs) is `tui`."""
    import runpy

    import demo.app

    opened: list[Namespace] = []
    monkeypatch.setattr(demo.app, "run_app", lambda args: opened.append(args) or 0)
    monkeypatch.setattr("sys.argv", ["demo", "01_fog", "--lang", "zh"])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("demo", run_name="__main__")
    assert done.value.code == 0
    assert (opened[0].command, opened[0].file, opened[0].lang) == ("tui", "01_fog", "zh")


def test_help_lists_the_app_commands_beside_the_others(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ")]
    assert listed[:2] == ["tui", "serve"]
    for command in ("play", "check", "list", "sql", "chaos", "worker", "enqueue"):
        assert command in listed


def test_tui_and_serve_share_one_declaration_of_the_app_options() -> None:
    from core.tools.cli import build_parser
    from demo.cli import APP_COMMANDS

    parser = build_parser(first=APP_COMMANDS)
    tui = parser.parse_args(["tui", "01_fog", "--lang", "zh", "--mode", "no_fencing"])
    served = parser.parse_args(["serve", "01_fog", "--lang", "zh", "--mode", "no_fencing"])
    shared = ("file", "lang", "mode", "sandbox", "db")
    assert {k: getattr(tui, k) for k in shared} == {k: getattr(served, k) for k in shared}
    assert served.max_sessions > 0 and served.host == "127.0.0.1"


def test_a_bad_db_for_the_app_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tui", "--db", ""]) == 2
    assert main(["serve", "--db", "some.db"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "borrowed-keys tui: --db needs a URL"
    assert err[1].startswith("borrowed-keys serve: --db some.db: each run needs a store")


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["play"])
    assert caught.value.code == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    ("lang", "said"), [("en", "not a SQLite database"), ("zh", "存储无法使用")]
)
def test_fleet_headless_says_a_store_it_cannot_use_in_the_runs_language(
    tmp_path: Path, lang: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.db"
    bad.write_text("not a database at all, just text\n")
    argv = ["fleet", "--headless", "--db", str(bad), "--workers", "1", "--tasks", "1"]
    code, out, err = run([*argv, "--lang", lang], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and said in err, err
    assert bad.read_text() == "not a database at all, just text\n"  # left as it was
