"""Which mistake is this? A run played under one of the seed's five mistakes, kept from the
room until it guesses.

The seed names five (常见误区): "误区一：把“任务状态=running”当成所有权", "误区二：租约设得
太长，图省心", "误区三：有心跳，没有 fencing", "误区四：只回收资格，不保存中间结果", "误区五：
用本地时间判断过期". The round chooses one of them for a run; the room watches the screen and
says which.
"""

import random
import zlib
from dataclasses import dataclass

from core.engine.modes import Mode

# In the seed's order, so the room's numbers are the seed's: 误区一 is 1.
SEED_MISTAKES: tuple[Mode, ...] = (
    Mode.NO_EXPIRY,
    Mode.LONG_LEASE,
    Mode.NO_FENCING,
    Mode.NO_CHECKPOINT,
    Mode.CLIENT_CLOCK,
)


def choose_mistake(name: str, seed: int | None = None) -> Mode:
    """One of the five for the scenario `name`: the same for the same seed, so a rehearsal
    can be repeated in front of the room; any of them without one."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    return SEED_MISTAKES[(zlib.crc32(name.encode("utf-8")) + seed) % len(SEED_MISTAKES)]


@dataclass(slots=True)
class GuessRound:
    """The mistake a run is played under, and the room's guess once it has made one."""

    mode: Mode
    guessed: int | None = None  # the number chosen, 1 to 5

    @property
    def revealed(self) -> bool:
        return self.guessed is not None

    @property
    def number(self) -> int:
        """The right number: the mistake's place among the seed's five."""
        return SEED_MISTAKES.index(self.mode) + 1

    @property
    def right(self) -> bool:
        return self.guessed == self.number

    def guess(self, chosen: int) -> bool | None:
        """The room's guess: whether it is right, or None for a number that names none of
        the five (nothing is taken). Once guessed, the round is over and stays so."""
        if self.guessed is not None or not 1 <= chosen <= len(SEED_MISTAKES):
            return None
        self.guessed = chosen
        return self.right
