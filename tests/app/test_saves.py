"""`s` in many tabs at once: every save gets a name of its own, and every file is whole."""

import threading
from pathlib import Path

import pytest

from demo.saves import Writer, save_files

EXTS = (".jsonl", ".svg", ".toml")


def writer(text: str) -> Writer:
    def write(path: Path) -> None:
        path.write_text(text, encoding="utf-8")

    return write


def writers(who: str) -> dict[str, Writer]:
    """Each file says whose save it is and what it is: `A.svg`."""
    return {ext: writer(f"{who}{ext}") for ext in EXTS}


def test_a_save_made_while_another_writes_takes_the_next_name(tmp_path: Path) -> None:
    """The race a check-then-write loses: B picks its number while A is still writing."""
    inner: list[Path] = []

    def a_jsonl(path: Path) -> None:
        path.write_text("A.jsonl", encoding="utf-8")
        inner.extend(save_files(tmp_path, "run", writers("B")))

    outer = save_files(
        tmp_path,
        "run",
        {
            ".jsonl": a_jsonl,
            ".svg": writer("A.svg"),
            ".toml": writer("A.toml"),
        },
    )
    assert {p.stem for p in inner} != {p.stem for p in outer}
    for who, paths in (("B", inner), ("A", outer)):
        assert len({p.stem for p in paths}) == 1
        for p in paths:
            assert p.read_text(encoding="utf-8") == f"{who}{p.suffix}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"bk-run-{n}{ext}" for n in (1, 2) for ext in EXTS
    )


def test_saves_from_many_threads_at_once_never_collide(tmp_path: Path) -> None:
    threads, each = 8, 5
    made: list[list[Path]] = []
    lock = threading.Lock()

    def saver(i: int) -> None:
        for j in range(each):
            paths = save_files(tmp_path, "run", writers(f"{i}-{j}"))
            with lock:
                made.append(paths)

    pool = [threading.Thread(target=saver, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert len({paths[0].stem for paths in made}) == threads * each
    assert len(list(tmp_path.iterdir())) == threads * each * len(EXTS)  # no temporary left
    for paths in made:
        texts = {p.read_text(encoding="utf-8").rsplit(".", 1)[0] for p in paths}
        assert len(texts) == 1  # the three files of one save are from that save


def test_a_failing_save_leaves_nothing_and_an_older_file_is_not_overwritten(
    tmp_path: Path,
) -> None:
    (tmp_path / "bk-run-1.svg").write_text("kept", encoding="utf-8")

    def broken(path: Path) -> None:
        path.write_text("half", encoding="utf-8")
        raise OSError("disk full")

    with pytest.raises(OSError):
        save_files(tmp_path, "run", {".jsonl": writer("x.jsonl"), ".svg": broken})
    assert [p.name for p in tmp_path.iterdir()] == ["bk-run-1.svg"]
    paths = save_files(tmp_path, "run", writers("y"))
    assert [p.name for p in paths] == [f"bk-run-2{ext}" for ext in EXTS]
    assert (tmp_path / "bk-run-1.svg").read_text(encoding="utf-8") == "kept"


async def test_one_app_saves_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import demo.app
    from core.scenarios.library import open_scenario
    from demo.app import BorrowedKeysApp

    monkeypatch.setattr(demo.app, "MAX_SAVES", 2)
    app = BorrowedKeysApp(open_scenario("01_fog"), lang="en", live_clock=False, save_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(3):
            await pilot.press("s")
            await pilot.pause()
        messages = [n.message for n in app._notifications]
    assert len(list(tmp_path.iterdir())) == 2 * len(EXTS)
    assert messages[-1].startswith("Not saved")


async def test_a_save_the_folder_refuses_is_one_line_and_the_app_goes_on(tmp_path: Path) -> None:
    from core.scenarios.library import open_scenario
    from demo.app import BorrowedKeysApp

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the save folder would be", encoding="utf-8")
    app = BorrowedKeysApp(
        open_scenario("01_fog"), lang="en", live_clock=False, save_dir=blocker / "out"
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("s")
        await pilot.pause()
        toasts = [str(n.message) for n in app._notifications]
        assert toasts and toasts[-1].startswith("Not saved: "), toasts
        assert "\n" not in toasts[-1]
        await pilot.press("n")  # the run goes on
        assert app.return_code is None
        assert app.saves_made == 0  # a save that wrote nothing is not spent
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]
