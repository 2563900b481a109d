"""Which safety mechanisms a mode leaves on, and the seed's statements as it prints them."""

from dataclasses import dataclass

from core.engine.config import Mode


@dataclass(frozen=True, slots=True)
class Policy:
    """Which safety mechanisms are on; each `False` is one of the seed's mistakes.

    `expiry=False` is mistake one whole: `running` is the only sign of ownership, so a
    claim writes no expiry, no renew deadline and no new tokens (a task has no version).
    `guards=False` runs the seed's Claim, Heartbeat and Complete with their guards exactly as
    printed; what the store adds to them (its clock, the fence token, renew_deadline, a dead
    letter) is listed line by line by `borrowed-keys sql --mode seed_sql`.
    """

    expiry: bool = True
    fencing: bool = True
    fence_tokens: bool = True  # False: no claim issues one (the world before the fence tag)
    idempotency: bool = True
    guards: bool = True

    @property
    def issues_fence_tokens(self) -> bool:
        """Whether a claim draws a fence token from the counter: not before the fence tag,
        and not without expiry, where a claim writes no new version at all."""
        return self.expiry and self.fence_tokens


# The seed's three statements, exactly as printed (its INTERVAL is the configured ttl
# here). `borrowed-keys sql` prints them beside the statements this store runs.
SEED_STATEMENTS: dict[str, str] = {
    "claim": """UPDATE agent_tasks
SET
  status = 'running',
  owner_id = :worker_id,
  attempt = attempt + 1,
  lease_token = lease_token + 1,
  lease_expires_at = NOW() + INTERVAL '60 seconds',
  last_heartbeat_at = NOW(),
  updated_at = NOW()
WHERE task_id = :task_id
  AND (status = 'queued' OR lease_expires_at < NOW());""",
    "heartbeat": """UPDATE agent_tasks
SET
  lease_expires_at = NOW() + INTERVAL '60 seconds',
  last_heartbeat_at = NOW(),
  updated_at = NOW()
WHERE task_id = :task_id
  AND owner_id = :worker_id
  AND lease_token = :lease_token;""",
    "complete": """UPDATE agent_tasks
SET
  status = 'done',
  result_uri = :result_uri,
  updated_at = NOW()
WHERE task_id = :task_id
  AND owner_id = :worker_id
  AND lease_token = :lease_token;""",
}


def policy_for(mode: Mode) -> Policy:
    """The safety mechanisms a mode leaves on."""
    return Policy(
        expiry=mode is not Mode.NO_EXPIRY,
        fencing=mode not in (Mode.NO_FENCING, Mode.BEFORE_FENCE),
        fence_tokens=mode is not Mode.BEFORE_FENCE,
        idempotency=mode is not Mode.NO_IDEMPOTENCY,
        guards=mode is not Mode.SEED_SQL,
    )
