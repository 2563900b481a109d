"""The run's mode: the correct engine, or one of the mistakes the seed warns about.

Apart from the lease timing (core.engine.config, which names it too) and light: the command
line lists the modes without loading the rest of the engine.
"""

import enum


class Mode(enum.StrEnum):
    """The correct engine, or one switched-on mistake (常见误区, or the seed's SQL as printed)."""

    CORRECT = "correct"
    NO_EXPIRY = "no_expiry"  # mistake one: `running` means owned, leases never expire
    LONG_LEASE = "long_lease"  # mistake two: a one-hour ttl "for peace of mind"
    NO_FENCING = "no_fencing"  # mistake three: heartbeats but no fence on the ledger
    # Mistake four as the seed writes it: "误区四：只回收资格，不保存中间结果……下一位拿到的只是
    # 空白现场". No box is ever sealed; a successor starts from step 1 on a blank scene.
    NO_CHECKPOINT = "no_checkpoint"
    # A second lesson beside mistake four, not the seed's: the box is saved, and a worker
    # taking over walks past it (the register says `checkpoint_ignored`).
    UNREAD_CHECKPOINT = "unread_checkpoint"
    CLIENT_CLOCK = "client_clock"  # mistake five: workers judge expiry by their own clock
    NO_IDEMPOTENCY = "no_idempotency"  # the formula's fifth part missing: effects repeat
    # The seed's Claim, Heartbeat and Complete with their guards exactly as printed (what the
    # store adds is listed line by line by `borrowed-keys sql --mode seed_sql`): the claim's
    # expiry half has no status guard, heartbeat and complete check only owner and lease
    # token, and complete leaves the expiry set, so a finished task is claimed and completed
    # again.
    SEED_SQL = "seed_sql"
    # "Renewal coupled to the business logic": only the work loop renews, between steps, so
    # one step longer than the lease loses it while the worker is healthy.
    HEARTBEAT_IN_WORK = "heartbeat_in_work"
    # The story before its fence tag: the fence enters only after the midnight return
    # ("从那天起，每次借出第六层钥匙时……还会附上一枚细长的铜片……城里把它叫'围栏签'"). Leases
    # expire and are renewed as in the correct run, but no fence token is ever issued,
    # written or checked, so a stale page is taken.
    BEFORE_FENCE = "before_fence"

    @property
    def issues_fence_tokens(self) -> bool:
        """Whether a claim issues a fence token (none in the world before the fence tag,
        none without expiry, where a claim writes no version at all)."""
        return self not in (Mode.BEFORE_FENCE, Mode.NO_EXPIRY)
