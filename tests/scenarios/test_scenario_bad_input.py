"""The malformed corpus: every bad file gives exit 2 and one line `FILE:LINE: message`."""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.scenarios.format import Scenario, ScenarioError, parse_scenario
from demo.cli import main

HERE = Path(__file__).parents[1]
BAD = sorted((HERE / "bad_scenarios").glob("*.toml"))
OK = sorted((HERE / "scenarios_ok").glob("*.toml"))
EXPECT = re.compile(r"^# expect: (\d+): (.+)$")


def expected_of(path: Path) -> tuple[int, str]:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = EXPECT.match(first)
    assert match, f"{path.name}: first line must be `# expect: LINE: message`"
    return int(match.group(1)), match.group(2)


def run_check(path: Path | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, where: str, message: str) -> None:
    assert err == f"{where}: {message}\n"
    assert "Traceback" not in err


def test_the_corpus_is_there() -> None:
    assert len(BAD) >= 60


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_file_exits_2_with_its_line(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line, message = expected_of(path)
    code, out, err = run_check(path, capsys)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, f"{path}:{line}", message)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_file_cannot_be_played_either(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line, message = expected_of(path)
    assert main(["play", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line_error(err, f"{path}:{line}", message)


# Files the corpus cannot hold as text: written here.
WRITTEN: list[tuple[str, bytes, str]] = [
    ("empty.toml", b"", "1: empty file: a scenario needs at least a title"),
    ("blank.toml", b"\n   \n\t\n", "1: empty file: a scenario needs at least a title"),
    (
        "binary.toml",
        b'title = "x"\n' + bytes(range(256)) * 4,
        "2: binary data (a NUL byte), not a TOML text",
    ),
    (
        "latin1.toml",
        'title = "x"\n# caf\u00e9\nsay = "na\u00efve"\n'.encode("latin-1"),
        "2: not UTF-8 text (byte 0xe9); save the file as UTF-8",
    ),
    (
        "utf16.toml",
        'title = "x"\n'.encode("utf-16"),
        "1: not UTF-8 text (it is UTF-16); save the file as UTF-8",
    ),
    (
        "deep.toml",
        b"title = 'x'\nv = " + b"[" * 5000 + b"]" * 5000 + b"\n",
        "2: bad TOML: nested too deeply",
    ),
]


@pytest.mark.parametrize(("name", "data", "expected"), WRITTEN, ids=[w[0] for w in WRITTEN])
def test_written_bad_files(
    name: str, data: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    code, _out, err = run_check(path, capsys)
    assert code == 2
    line, message = expected.split(": ", 1)
    assert_one_line_error(err, f"{path}:{line}", message)


def test_bom_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes('\ufefftitle = "x"\n'.encode())
    assert run_check(path, capsys)[0] == 0


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nope.toml"
    code, _out, err = run_check(path, capsys)
    assert code == 2
    assert_one_line_error(err, str(path), "cannot read: no such file")


def test_a_loop_of_symbolic_links(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.toml").symlink_to("b.toml")
    (tmp_path / "b.toml").symlink_to("a.toml")
    code, _out, err = run_check(tmp_path / "a.toml", capsys)
    assert code == 2
    assert_one_line_error(
        err, str(tmp_path / "a.toml"), "cannot read: symbolic links that lead round in a loop"
    )


def test_a_symbolic_link_to_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.toml").symlink_to("gone.toml")
    code, _out, err = run_check(tmp_path / "a.toml", capsys)
    assert code == 2
    assert_one_line_error(
        err,
        str(tmp_path / "a.toml"),
        "cannot read: a symbolic link to 'gone.toml', which does not exist",
    )


@pytest.mark.parametrize("opening", ["[" * 2000, "{a=" * 600])
def test_nesting_too_deep_is_told_on_its_line(
    opening: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closing = "".join("]" if ch == "[" else "}" for ch in opening if ch in "[{")
    path = tmp_path / "deep.toml"
    # brackets in a string and a comment before it do not count
    path.write_text('title = "x [[[["  # {{{{\n' + "\n" * 8 + f"x = {opening}1{closing}\n")
    code, _out, err = run_check(path, capsys)
    assert code == 2
    assert_one_line_error(err, f"{path}:10", "bad TOML: nested too deeply")


def test_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_check(tmp_path, capsys)
    assert code == 2
    assert_one_line_error(err, str(tmp_path), "cannot read: it is a directory, not a file")


def test_huge_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.toml"
    path.write_bytes(b'title = "x"\n' + b"# padding\n" * 200_000)
    code, _out, err = run_check(path, capsys)
    assert code == 2
    assert err.startswith(f"{path}: file too large")


def test_check_reports_every_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(OK[0]), str(BAD[0]), str(OK[1])])
    out, err = capsys.readouterr()
    assert code == 2
    assert out.count(": ok (") == 2
    assert len(err.splitlines()) == 1


# -- hypothesis: the loader only ever returns a Scenario or raises ScenarioError -------------

VALID_TEXT = (HERE / "scenarios_ok" / "manual.toml").read_text(encoding="utf-8")
KEYS = [
    "title", "mode", "seed", "lease_ttl", "heartbeat_every", "poll_every", "renew_deadline",
    "self_fencing", "workers", "tasks", "step", "id", "do", "by", "worker", "task", "expect",
    "steps", "step_time", "max_attempts", "kind", "autopilot", "skew", "factor", "count",
    "ask", "ask_zh", "choices", "choices_zh", "answer", "why", "why_zh",
    "follow_up", "follow_up_choices", "follow_up_answer", "follow_up_why",
]  # fmt: skip


def toml_scalar() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(
            lambda f: "nan" if f != f else ("inf" if f == float("inf") else repr(f))
        ),
        st.booleans().map(lambda b: "true" if b else "false"),
        st.text(max_size=12).map(lambda s: '"' + s.replace("\\", "").replace('"', "") + '"'),
        st.sampled_from(['"10s"', '"-5s"', '"0s"', '"1h"', '"250ms"', '"8760h"', '"x"', "[]"]),
        st.sampled_from(['"correct"', '"no_fencing"', '"advance"', '"a"', '"b"', '"t1"']),
        st.just('[{ task = "t1" }]'),
        st.just("1979-05-27"),
    )


@st.composite
def generated_documents(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append('title = "fuzz"')
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.one_of(st.sampled_from(KEYS), st.from_regex(r"[a-z_]{1,8}", fullmatch=True)))
        lines.append(f"{key} = {draw(toml_scalar())}")
    for _ in range(draw(st.integers(0, 4))):
        table = draw(st.sampled_from(["workers", "tasks", "step", "step", "worker", "x"]))
        lines.append(f"[[{table}]]")
        for _ in range(draw(st.integers(0, 4))):
            key = draw(st.sampled_from(KEYS))
            lines.append(f"{key} = {draw(toml_scalar())}")
    return "\n".join(lines) + "\n"


@st.composite
def mutated_valid(draw: st.DrawFn) -> str:
    text = VALID_TEXT
    for _ in range(draw(st.integers(1, 5))):
        how = draw(st.sampled_from(["delete", "insert", "replace", "drop_line", "dup_line"]))
        if how in ("drop_line", "dup_line"):
            lines = text.splitlines()
            i = draw(st.integers(0, len(lines) - 1))
            lines = lines[:i] + lines[i + 1 :] if how == "drop_line" else lines[: i + 1] + lines[i:]
            text = "\n".join(lines) + "\n"
            continue
        at = draw(st.integers(0, len(text)))
        if how == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 5)) :]
        else:
            piece = draw(st.text(min_size=1, max_size=5))
            end = at + (len(piece) if how == "replace" else 0)
            text = text[:at] + piece + text[end:]
    return text


def only_scenario_or_error(data: str | bytes) -> None:
    try:
        result = parse_scenario(data, "fuzz.toml")
    except ScenarioError as exc:
        assert str(exc).startswith("fuzz.toml")
        assert "\n" not in str(exc)
        return
    assert isinstance(result, Scenario)


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(generated_documents())
def test_fuzz_generated_documents(text: str) -> None:
    only_scenario_or_error(text)


@FUZZ
@given(mutated_valid())
def test_fuzz_mutations_of_a_valid_scenario(text: str) -> None:
    only_scenario_or_error(text)
    only_scenario_or_error(text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(data: bytes) -> None:
    only_scenario_or_error(data)
    only_scenario_or_error(b'title = "x"\n' + data)


@FUZZ
@given(st.text(max_size=200))
def test_fuzz_random_text(text: str) -> None:
    only_scenario_or_error(text)


@pytest.mark.parametrize(
    ("name", "near"),
    [("04_fence", "00_story_4b_fence"), ("foggy", "01_fog"), ("01_fg.toml", "01_fog")],
)
def test_a_name_near_a_bundled_one_is_named_back(
    name: str, near: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lesson's name typed from memory: one line that names the scenario meant."""
    code, _out, err = run_check(name, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"{name}: no such file, nor a bundled scenario of that name")
    assert f"did you mean {near}" in err and "borrowed-keys list" in err


def test_a_name_near_no_bundled_one_points_at_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_check("xyz", capsys)
    assert code == 2 and "did you mean" not in err
    assert_one_line_error(
        err,
        "xyz",
        "no such file, nor a bundled scenario of that name (`borrowed-keys list` names them all)",
    )
