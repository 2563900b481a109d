"""Task kinds: what one step of an agent task does, as data plus small pure functions.

Adding a kind means adding one `TaskKind` to KINDS. Every function is deterministic in its
inputs, so replays give the same pages, checkpoints and effects.
"""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

State = dict[str, Any]


@dataclass(frozen=True, slots=True)
class StepOutput:
    """What a step produced: the ledger page, the new checkpoint state, an optional effect."""

    page: str
    state: State
    effect: str | None = None
    effect_payload: Any = None


@dataclass(frozen=True, slots=True)
class TaskKind:
    """One kind of agent task.

    A step's state is everything a successor needs to go on from that step (the running
    total, the URL and actions so far, ...): the checkpoint saves exactly it, and the
    result is computed from the last one alone.
    """

    name: str
    summary: str
    initial_state: Callable[[str, int], State]
    run_step: Callable[[str, int, int, State], StepOutput]  # task_id, step, steps, state
    result: Callable[[str, State], Any]
    park_after: Callable[[int], int | None] = lambda steps: None
    # The state after a page written by hand as step `step` (a scenario's scripted page),
    # for kinds whose state depends on what the page says; None: the step's own state.
    read_page: Callable[[str, int, State, str], State | None] | None = None
    # The state a worker starts from when it resumes from a box rather than from its own
    # memory (a new process: nothing of the last holder's is open any more).
    resume: Callable[[State], State] = lambda state: state
    # What a holder's memory starts from when it takes the task under a lease (its token
    # given): what it reads for itself (the ledger kind's village reports). A holder that
    # lost its lease without knowing keeps what it read under its own, so a page it writes
    # late is its own world's page, not a copy of the current holder's.
    take: Callable[[State, int], State] = lambda state, lease_token: state

    def after_page(self, task_id: str, step: int, steps: int, state: State, page: str) -> State:
        """What a worker knows after writing `page` as step `step`, from `state` before it."""
        if self.read_page is not None:
            known = self.read_page(task_id, step, state, page)
            if known is not None:
                return known
        return self.run_step(task_id, step, steps, state).state


def _pick(options: tuple[str, ...], *parts: object) -> str:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return options[digest[0] % len(options)]


# -- ledger: the story's autumn allocation ledger ------------------------------------------

# The pages are data, written in English; a scripted page uses the same English names, and
# its worker reads what it means from its English form even when a Chinese run writes the
# page's Chinese form (`value_zh`) into the ledger.
_VILLAGES = (
    "north bank",
    "south bank",
    "west ferry",
    "east flat",
    "stone bridge",
    "willow bay",
    "pine mouth",
    "deer creek",
    "bluestone",
    "maple wood",
)


# The state's key for the edition of the village reports its holder read (none: as first
# filed). The villages count again when the floor first changes hands, so the first holder
# and any holder after it read different figures, and two holders of the same step write
# different pages: "一个是当前租牌，一个是过期的记忆" (two claims, and two worlds, not one page
# written twice). Two editions, not one per lease: the explorer's world stays finite.
_EDITION = "edition"


def edition(lease_token: int) -> int:
    """The edition of the reports read under lease `lease_token`: 1 (as first filed) under
    the first lease, 2 (counted again) under any later one."""
    return min(max(lease_token, 1), 2)


def _grain(task_id: str, step: int, read: int) -> int:
    """The step's village report in edition `read` (0 or 1: as first filed)."""
    seed = f"{task_id}/{step}" if read <= 1 else f"{task_id}/{step}/{read}"
    return 40 + int(hashlib.sha256(seed.encode()).hexdigest()[:4], 16) % 160


def _ledger_step(task_id: str, step: int, steps: int, state: State) -> StepOutput:
    village = _pick(_VILLAGES, task_id, step)
    read = int(state.get(_EDITION, 0))
    grain = _grain(task_id, step, read)
    total = int(state.get("total", 0)) + grain
    page = f"page {step}: {village} {grain} dan (total {total})"
    new_state: State = {"reconciled": step, "total": total, "last": village}
    if read:
        new_state[_EDITION] = read
    return StepOutput(page=page, state=new_state)


def _ledger_take(state: State, lease_token: int) -> State:
    read = edition(lease_token)
    kept = {k: v for k, v in state.items() if k != _EDITION}
    return {**kept, _EDITION: read} if read > 1 else kept


# A page as the kind writes it ("page 3: west ferry 73 dan (total 288)") or as a scenario
# scripts it ("page 1: north bank, 120 dan").
_LEDGER_PAGE = re.compile(r"^\s*page\s+\d+\s*:\s*(?P<village>.*?),?\s+(?P<grain>\d+)\s*dan\b")


def _ledger_page(task_id: str, step: int, state: State, page: str) -> State | None:
    found = _LEDGER_PAGE.match(page)
    if found is None:
        return None
    total = int(state.get("total", 0)) + int(found["grain"])
    known: State = {"reconciled": step, "total": total, "last": found["village"]}
    if state.get(_EDITION):
        known[_EDITION] = state[_EDITION]
    return known


LEDGER = TaskKind(
    name="ledger",
    summary="reconcile one village report into a page of the autumn ledger per step",
    initial_state=lambda task_id, steps: {"reconciled": 0, "total": 0},
    run_step=_ledger_step,
    read_page=_ledger_page,
    take=_ledger_take,
    result=lambda task_id, state: {
        "pages": state.get("reconciled", 0),
        "total": state.get("total"),
    },
)

# -- browser: open, act, extract, screenshot -------------------------------------------------

_BROWSER_ACTIONS = ("open", "act", "extract", "screenshot")
# Set on the state a successor resumes from: the dead holder's browser is gone, so its first
# step reopens the box's URL before acting on it. Never saved: the next box drops it.
_REOPEN = "reopen"


def _browser_step(task_id: str, step: int, steps: int, state: State) -> StepOutput:
    action = _BROWSER_ACTIONS[(step - 1) % len(_BROWSER_ACTIONS)]
    url = state.get("url") or f"https://archive.example/{task_id}"
    if action == "open":
        # every open is a page of its own: the first open is page 1, the second page 2, ...
        url = f"https://archive.example/{task_id}/page/{(step - 1) // len(_BROWSER_ACTIONS) + 1}"
    done = [*state.get("actions", []), f"{step}:{action}"]
    dom = state.get("dom_summary", "")
    if action == "extract":
        dom = f"{len(done)} nodes read from {url}"
    next_action = _BROWSER_ACTIONS[step % len(_BROWSER_ACTIONS)] if step < steps else "finish"
    new_state = {"url": url, "actions": done, "dom_summary": dom, "next_action": next_action}
    if action == "screenshot":
        new_state["screenshot"] = f"shot-{task_id}-{step}.png"
    elif state.get("screenshot"):
        new_state["screenshot"] = state["screenshot"]  # where the current one is
    page = f"{action} {url}"
    if state.get(_REOPEN) and action != "open" and state.get("url"):
        page = f"reopen {url}; {action}"
    return StepOutput(page=page, state=new_state)


def _browser_resume(state: State) -> State:
    return {**state, _REOPEN: True} if state.get("url") else state


BROWSER = TaskKind(
    name="browser",
    summary="a browser agent: open a URL, act, extract a DOM summary, take a screenshot",
    initial_state=lambda task_id, steps: {"url": None, "actions": [], "next_action": "open"},
    run_step=_browser_step,
    resume=_browser_resume,
    result=lambda task_id, state: {"url": state.get("url"), "actions": len(state["actions"])},
)

# -- tools: retrieve, extract, call an internal API (a side effect), produce a result ------

_TOOL_STEPS = ("retrieve", "extract", "call_api", "produce")
# What one call of the internal API charges, so that a repeat has a price: "Idempotency Key
# 让重放调用不炸副作用" is what the second charge costs without one.
API_CALL_AMOUNT = 120


def _tools_step(task_id: str, step: int, steps: int, state: State) -> StepOutput:
    tool = _TOOL_STEPS[(step - 1) % len(_TOOL_STEPS)]
    calls = [*state.get("calls", []), f"{step}:{tool}"]
    # "Artifact Store 让工具输出别只存在于上下文里": each tool's output is kept outside the
    # context, and the box holds only where it went.
    artifacts = [*state.get("artifacts", []), f"artifact://{task_id}/{step}-{tool}.json"]
    new_state = {"calls": calls, "documents": state.get("documents", 0), "artifacts": artifacts}
    effect = None
    payload: Any = None
    if tool == "retrieve":
        new_state["documents"] = int(new_state["documents"]) + 3
    if tool == "call_api":
        effect = "api_call"
        payload = {
            "task": task_id,
            "step": step,
            "documents": new_state["documents"],
            "amount": API_CALL_AMOUNT,
        }
    return StepOutput(
        page=f"{tool} #{step} -> {artifacts[-1]}",
        state=new_state,
        effect=effect,
        effect_payload=payload,
    )


TOOLS = TaskKind(
    name="tools",
    summary="multi-step tool calling: retrieve, extract, call an internal API, produce a result",
    initial_state=lambda task_id, steps: {"calls": [], "documents": 0, "artifacts": []},
    run_step=_tools_step,
    result=lambda task_id, state: {"calls": len(state["calls"]), "documents": state["documents"]},
)

# -- approval: some steps, park for a human, the rest after approval -----------------------


def _approval_step(task_id: str, step: int, steps: int, state: State) -> StepOutput:
    phase = "draft" if step <= max(1, steps // 2) else "apply"
    done = [*state.get("done", []), f"{step}:{phase}"]
    return StepOutput(page=f"{phase} #{step}", state={"done": done})


APPROVAL = TaskKind(
    name="approval",
    summary="human-in-the-loop: some steps, park for approval, the rest under a new lease",
    initial_state=lambda task_id, steps: {"done": []},
    run_step=_approval_step,
    result=lambda task_id, state: {"steps": len(state["done"]), "approved": True},
    park_after=lambda steps: max(1, steps // 2) if steps > 1 else None,
)

KINDS: dict[str, TaskKind] = {k.name: k for k in (LEDGER, BROWSER, TOOLS, APPROVAL)}
