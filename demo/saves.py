"""What `s` writes: one save is three files under one fresh name, each whole or not there.

Several apps may save into one folder at once (every browser tab of `serve` is an app
process with the server's working directory). A name is taken by creating its first file
with a hard link, which fails if the name exists: two saves can never pick the same name,
as a check-then-write could. Every file is written under a hidden temporary name first and
then linked or renamed into place, so nobody ever reads half a file; a save that fails
leaves nothing behind.
"""

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

SAVE_FOLDER = "borrowed-keys-out"  # `s` saves here, under the current directory
# Saves one app may make (three files each): a key held down in a shared browser tab must
# not fill the disk of the machine that serves it.
MAX_SAVES = 20

# Each writer gets a path to write its file into (a temporary one in the same folder); what
# it returns is ignored.
Writer = Callable[[Path], object]


class SaveLimitReached(Exception):
    """This app has saved MAX_SAVES times already."""


def save_files(folder: Path, slug: str, writers: Mapping[str, Writer]) -> list[Path]:
    """Write `bk-SLUG-N.EXT` for each extension in `writers`, N the first free number.

    The first extension's file is the one that takes the name; its writer runs first.
    """
    folder.mkdir(parents=True, exist_ok=True)
    staged: dict[str, Path] = {}
    try:
        for ext, write in writers.items():
            fd, name = tempfile.mkstemp(prefix=f".bk-{slug}-", suffix=ext, dir=folder)
            os.close(fd)
            os.chmod(name, 0o644)  # as an ordinary file is, not mkstemp's owner-only
            staged[ext] = Path(name)
            write(staged[ext])
        first, *rest = staged
        stem = _take_name(folder, slug, staged[first], list(staged))
        finals = [folder / f"{stem}{first}"]
        for ext in rest:
            final = folder / f"{stem}{ext}"
            os.replace(staged[ext], final)
            finals.append(final)
        return finals
    finally:
        for tmp in staged.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def _take_name(folder: Path, slug: str, first: Path, exts: list[str]) -> str:
    for n in itertools.count(1):
        stem = f"bk-{slug}-{n}"
        if any((folder / f"{stem}{ext}").exists() for ext in exts[1:]):
            continue  # left by an older save or by hand: not ours to overwrite
        try:
            os.link(first, folder / f"{stem}{exts[0]}")  # fails if the name is taken
        except FileExistsError:
            continue
        return stem
    raise AssertionError("unreachable")  # itertools.count never ends
