"""`fleet --check` judges the downstream service's books a `--work` run kept beside its
lease history, with the same judge as the live run; books edited to hide a harm are not
taken (one line, `FILE:LINE`, exit 2)."""

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from core.fleet.command import run_check_command
from core.fleet.service_books import service_lines

RECORDED = Path(__file__).parent.parent / "fleet_runs" / "stalled_run.jsonl"


def _request(seq: int, verdict: str, **fields: Any) -> dict[str, Any]:
    entry = {"seq": seq, "at_ms": 1_700_000_000_000 + seq, "endpoint": "charge", "key": None}
    entry.update(token=None, newest=None, idempotency_key=None, verdict=verdict, detail={})
    return {**entry, **fields}


def _books(charges: int) -> dict[str, Any]:
    """A tools run's books: t1 charged `charges` times for call-1, then its result written."""
    history = [
        _request(
            n, "charged", detail={"id": f"ch_{n}", "task": "t1", "memo": "call-1", "amount": 10}
        )
        for n in range(1, charges + 1)
    ]
    history.append(_request(charges + 1, "accepted", endpoint="artifact", key="t1/result", token=2))
    made = [
        {"id": f"ch_{n}", "task": "t1", "memo": "call-1", "amount": 10, "idempotency_key": None}
        for n in range(1, charges + 1)
    ]
    return {"fencing": True, "charges": made, "history": history}


def _saved(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    """The recorded run with the service's lines put before its verdict line, as a save
    writes them."""
    run = RECORDED.read_text(encoding="utf-8").splitlines()
    body = [json.dumps(line, ensure_ascii=False) for line in lines]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([*run[:-1], *body, run[-1]]) + "\n", encoding="utf-8")
    return path


def _check(path: Path, lang: str = "en") -> int:
    return run_check_command(argparse.Namespace(check=str(path), lang=lang))


def test_the_kept_books_are_judged_again_beside_the_lease_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(_saved(tmp_path, service_lines(_books(1)))) == 0
    out = capsys.readouterr().out
    assert "Verdict: held" in out
    assert "The downstream service's books (2 requests), judged by its rules" in out
    assert out.rstrip().endswith("The service's rules held.")


def test_a_second_charge_in_the_kept_books_turns_the_check_red_in_both_languages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = _saved(tmp_path, service_lines(_books(2)))
    assert _check(saved) == 1
    assert "t1 was charged 2 times for call-1 (ch_1, ch_2)" in capsys.readouterr().out
    assert _check(saved, "zh") == 1
    out = capsys.readouterr().out
    assert "t1 为同一件事（call-1）被扣了 2 次款（第 1、2 笔扣款）" in out
    assert "下游服务的规则被打破了 1 次。" in out


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        # a charge removed to hide it, the head left as it was
        (lambda lines: lines[:-1], "say they hold 2 charges, and the file holds 1"),
        # a request removed from the middle
        (lambda lines: [lines[0], *lines[2:]], "request 2 comes where request 1 should"),
        (lambda lines: [{**lines[0], "v": 2}, *lines[1:]], "books of version 2, newer than"),
        (
            lambda lines: [lines[0], {**lines[1], "verdict": "fine"}, *lines[2:]],
            "'verdict' 'fine' is not one the service says",
        ),
        (lambda lines: lines[1:], "a line of the service's books before their head"),
        # the second charge removed and the head's count made to agree: its request remains
        (
            lambda lines: [{**lines[0], "charges": 1}, *lines[1:-1]],
            "request 2 made a charge 'ch_2' its charges do not hold as it was made",
        ),
        (
            lambda lines: [*lines[:-1], {**lines[-1], "amount": 1}],
            "request 2 made a charge 'ch_2' its charges do not hold as it was made",
        ),
        (
            lambda lines: [*lines[:-1], {**lines[-1], "id": "ch_9"}],
            "request 2 made a charge 'ch_2' its charges do not hold",
        ),
        (lambda lines: [*lines, lines[-1]], "say they hold 2 charges, and the file holds 3"),
        (
            lambda lines: [{**lines[0], "charges": 3}, *lines[1:], {**lines[-1], "id": "ch_3"}],
            "the service's charge 'ch_3' was made by no request in its history",
        ),
    ],
)
def test_books_edited_to_hide_a_harm_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, said: str
) -> None:
    saved = _saved(tmp_path, edit(service_lines(_books(2))))
    assert _check(saved) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
    assert err[0].startswith(f"borrowed-keys fleet: {saved}:")
