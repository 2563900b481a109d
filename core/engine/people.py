"""The story's cast by worker id, and what a fleet's numbered workers are called.

They sit under the scenarios and the fleet alike, so that a pane, a toast and a headless
line name a worker the same way. No id is shown where a name is known: "No English words,
ids or unit letters on Chinese screens" is the house's reading of the seed's one vocabulary.
"""

import re
from typing import Final

# (en, zh), as the glossary's cast says them
PEOPLE: Final[dict[str, tuple[str, str]]] = {
    "acheng": ("Acheng", "阿澄"),
    "linzhou": ("Linzhou", "临舟"),
    "elder": ("Elder", "校对官"),
    "laojiang": ("Laojiang", "老绛"),
    # The seed's own two workers, "worker A 卡死，worker B 接手，A 恢复后写入被拒": the
    # scenarios that tell that demo (and its queue's consumers) call them by a letter. In
    # English the letter is the name; in a Chinese sentence a bare Latin letter pressed
    # against the characters ("这一页是A凭...") is no word, so they are named as the
    # scenarios' own Chinese narration names them.
    "A": ("A", "执行者 A"),
    "B": ("B", "执行者 B"),
    "worker-a": ("worker-a", "消费者 A"),
    "worker-b": ("worker-b", "消费者 B"),
}
# The cast a fleet starts its workers under, in order (the keeper is the store, no worker).
WORKER_CAST: Final = ("acheng", "linzhou", "elder")

_NUMBERED = re.compile(r"w([1-9][0-9]{0,3})")


def called(worker_id: str, lang: str) -> str:
    """A worker's name on screen: the story's name, "worker 4" (4 号执行者) for a fleet's
    numbered worker, or the name a presenter gave it."""
    known = PEOPLE.get(worker_id)
    if known is not None:
        return known[1] if lang == "zh" else known[0]
    numbered = _NUMBERED.fullmatch(worker_id)
    if numbered is not None:
        n = numbered.group(1)
        return f"{n} 号执行者" if lang == "zh" else f"worker {n}"
    return worker_id
