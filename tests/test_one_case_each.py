"""`--one-case-each` (make test-min) keeps each test function once per backend and language."""

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.conftest import _one_case_each


def _item(function: str, **params: object) -> Any:
    return SimpleNamespace(
        path=Path("tests/x.py"),
        cls=None,
        originalname=function,
        name=f"{function}[{'-'.join(map(str, params.values()))}]",
        callspec=SimpleNamespace(params=params),
    )


def test_the_first_case_of_each_backend_and_language_is_kept() -> None:
    deselected: list[object] = []
    config = SimpleNamespace(
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items))
    )
    items = [
        _item("test_a", lang="en", size=80),
        _item("test_a", lang="en", size=200),
        _item("test_a", lang="zh", size=80),
        _item("test_a", lang="zh", size=200),
        _item("test_b", backend="sqlite", n=1),
        _item("test_b", backend="postgresql", n=1),
        _item("test_b", backend="sqlite", n=2),
        _item("test_c"),
    ]
    _one_case_each(cast(pytest.Config, config), cast(list[pytest.Item], items))
    assert [i.name for i in items] == [
        "test_a[en-80]",
        "test_a[zh-80]",
        "test_b[sqlite-1]",
        "test_b[postgresql-1]",
        "test_c[]",
    ]
    assert len(deselected) == 3
