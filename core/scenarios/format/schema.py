"""The format declared: one pydantic model per table, action and expectation subject."""

from typing import Annotated, Any, ClassVar, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    PrivateAttr,
    Strict,
    Tag,
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.engine.config import Mode
from core.scenarios.format.fields import (
    Attempts,
    Choices,
    Count,
    Duration,
    Flag,
    Ident,
    Instant,
    Kind,
    ModeName,
    NonBlank,
    SignedDuration,
    Size,
    Table,
    TaskSteps,
    Text,
    bounded,
    duration,
    field_error,
    keys_of,
    member_of,
    positive_factor,
    table_error,
)
from core.scenarios.format.model import (
    MAX_CHOICES,
    MAX_PLAYBACK_STEPS,
    MAX_SEED,
    MAX_TASKS,
    MAX_WORKERS,
    METRICS,
    PANELS,
    REJECT_REASONS,
    TASK_STATUSES,
    VIOLATIONS,
    WORKER_STATES,
    Expectation,
    Question,
    Subject,
    said,
    show,
    suggest,
    suggest_word,
    type_name,
)
from core.scenarios.glossary import file_mistake, type_word
from core.sim.spec import ACTION_TYPES, Action, Enqueue, TaskSpec, WorkerSpec

# -- workers and tasks ----


class WorkerTable(Table):
    id: Ident
    autopilot: Flag = True
    skew_ms: SignedDuration = Field(0, alias="skew")
    self_fencing: Flag = False
    heartbeat_payload_bytes: Size = Field(0, alias="heartbeat_payload")

    def spec(self) -> WorkerSpec:
        return WorkerSpec(
            id=self.id,
            autopilot=self.autopilot,
            skew_ms=self.skew_ms,
            self_fencing=self.self_fencing,
            heartbeat_payload_bytes=self.heartbeat_payload_bytes,
        )


class _TaskFields(Table):
    kind: Kind | None = None
    steps: TaskSteps | None = None
    step_time_ms: Duration | None = Field(None, alias="step_time")
    max_attempts: Attempts | None = None

    def given(self) -> dict[str, Any]:
        """The keys the file gave, by their Python names; the rest keep TaskSpec's defaults."""
        return self.model_dump(exclude_unset=True, exclude={"do", "id", "task"})


class TaskTable(_TaskFields):
    id: Ident

    def spec(self) -> TaskSpec:
        return TaskSpec(id=self.id, **self.given())


# -- actions: one model per action, its fields named as the action's dataclass fields ----


class _ActionTable(Table):
    do: str

    def to_action(self) -> Action:
        given = self.model_dump(exclude_unset=True, exclude={"do"})
        return ACTION_TYPES[self.do](**given)


class _OnWorker(_ActionTable):
    worker: Ident


class _Advance(_ActionTable):
    do: Literal["advance"]
    by_ms: Duration = Field(alias="by")


class _FreezeHeartbeat(_OnWorker):
    do: Literal["freeze_heartbeat"]


class _Stall(_OnWorker):
    do: Literal["stall"]


class _Kill(_OnWorker):
    do: Literal["kill"]


class _Partition(_OnWorker):
    do: Literal["partition"]


class _Heal(_OnWorker):
    do: Literal["heal"]


class _Resume(_OnWorker):
    do: Literal["resume"]


class _Restart(_OnWorker):
    do: Literal["restart"]


class _AddWorker(_OnWorker):
    do: Literal["add_worker"]
    skew_ms: SignedDuration = Field(0, alias="skew")
    autopilot: Flag = True


class _Slow(_OnWorker):
    do: Literal["slow"]
    factor: Annotated[float, BeforeValidator(positive_factor)]


class _Skew(_OnWorker):
    do: Literal["skew"]
    by_ms: SignedDuration = Field(alias="by")


class _HeartbeatPayload(_OnWorker):
    do: Literal["heartbeat_payload"]
    size_bytes: Size = Field(alias="size")


class _Load(_ActionTable):
    do: Literal["load"]
    factor: Annotated[float, BeforeValidator(positive_factor)]


class _Enqueue(_TaskFields, _ActionTable):
    do: Literal["enqueue"]
    task: Ident

    def to_action(self) -> Action:
        return Enqueue(task=self.task, **self.given())


class _Approve(_ActionTable):
    do: Literal["approve"]
    task: Ident


class _Reject(_ActionTable):
    do: Literal["reject"]
    task: Ident


class _Claim(_OnWorker):
    do: Literal["claim"]
    task: Ident | None = None


class _Heartbeat(_OnWorker):
    do: Literal["heartbeat"]


class _Checkpoint(_OnWorker):
    do: Literal["checkpoint"]
    step: TaskSteps


class _Write(_OnWorker):
    do: Literal["write"]
    key: Ident
    # none: the page its worker's memory makes for the step, at the instant it writes
    value: Text | None = None
    value_zh: Text | None = None  # the same page as a Chinese run writes it

    @model_validator(mode="before")
    @classmethod
    def _paired(cls, data: Any) -> Any:
        # The format's pairing (say and say_zh): a Chinese page only beside its English one.
        if isinstance(data, dict) and "value_zh" in data and "value" not in data:
            raise table_error(said("value_zh_alone"), "value_zh")
        return data


class _Effect(_OnWorker):
    do: Literal["effect"]
    key: Ident


class _Complete(_OnWorker):
    do: Literal["complete"]


class _Fail(_OnWorker):
    do: Literal["fail"]
    retry: Flag = True


class _Park(_OnWorker):
    do: Literal["park"]


class _Autopilot(_OnWorker):
    do: Literal["autopilot"]


_ACTION_TABLES: Final[tuple[type[_ActionTable], ...]] = (
    _Advance,
    _FreezeHeartbeat,
    _Stall,
    _Kill,
    _Partition,
    _Heal,
    _Resume,
    _Restart,
    _AddWorker,
    _Slow,
    _Skew,
    _HeartbeatPayload,
    _Load,
    _Enqueue,
    _Approve,
    _Reject,
    _Claim,
    _Heartbeat,
    _Checkpoint,
    _Write,
    _Effect,
    _Complete,
    _Fail,
    _Park,
    _Autopilot,
)
# Each action's keys, `do` left out; every key any action may carry in its [[step]] table.
ACTION_KEYS_OF: Final = {
    get_args(t.model_fields["do"].annotation)[0]: keys_of(t, leave_out=("do",))
    for t in _ACTION_TABLES
}
ACTION_KEYS: Final = tuple(dict.fromkeys(k for keys in ACTION_KEYS_OF.values() for k in keys))


_AnyAction = Annotated[
    _Advance
    | _FreezeHeartbeat
    | _Stall
    | _Kill
    | _Partition
    | _Heal
    | _Resume
    | _Restart
    | _AddWorker
    | _Slow
    | _Skew
    | _HeartbeatPayload
    | _Load
    | _Enqueue
    | _Approve
    | _Reject
    | _Claim
    | _Heartbeat
    | _Checkpoint
    | _Write
    | _Effect
    | _Complete
    | _Fail
    | _Park
    | _Autopilot,
    Discriminator("do"),
]


# -- expectations: one model per subject ----


class _ExpectTable(Table):
    subject: ClassVar[Subject]
    # The keys whose value is the id of a worker or a task, which must exist by the step.
    names: ClassVar[dict[str, Subject]] = {}
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: Any) -> Any:
        model = handler(data)
        model._order = tuple(data)  # the file's order, for messages and the writer
        return model

    def to_expectation(self, line: int) -> Expectation:
        values = self.model_dump(by_alias=True)
        params = tuple((k, values[k]) for k in self._order if k != self.subject)
        return Expectation(self.subject, values[self.subject], params, line=line)


class _TaskExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.TASK
    names: ClassVar[dict[str, Subject]] = {"task": Subject.TASK, "owner": Subject.WORKER}
    task: Ident
    status: Annotated[str, Strict(), AfterValidator(member_of(TASK_STATUSES, "task status"))] = ""
    owner: Text = ""
    attempt: Count = 0
    lease_token: Count = 0
    fence_token: Count = 0
    checkpoint_step: Count = 0
    # virtual instants as durations since the start; "" = none (no lease, e.g. a finished
    # task, or mistake one's task with no version)
    expires_at: Instant = ""
    renew_deadline: Instant = ""
    last_heartbeat_at: Instant = ""
    # what the newest box holds, as the Checkpoints tab says it in English ("" = no box)
    box: Text = ""


class _WorkerExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.WORKER
    names: ClassVar[dict[str, Subject]] = {"worker": Subject.WORKER, "holds": Subject.TASK}
    worker: Ident
    state: Annotated[str, Strict(), AfterValidator(member_of(WORKER_STATES, "worker state"))] = ""
    holds: Text = ""
    # the tokens the worker believes it holds (they may be stale)
    lease_token: Count = 0
    fence_token: Count = 0


class _LedgerExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.LEDGER
    names: ClassVar[dict[str, Subject]] = {"writer": Subject.WORKER}
    ledger: Ident
    value: Text = ""
    value_zh: Text = ""  # the page as a Chinese run writes it (a write's value_zh)
    fence_token: Count = 0
    writer: Text = ""

    @model_validator(mode="after")
    def _paired(self) -> "_LedgerExpect":
        # The format's pairing (say and say_zh, choices and choices_zh): a Chinese form only
        # beside the English one it translates.
        if "value_zh" in self.model_fields_set and "value" not in self.model_fields_set:
            raise table_error(said("value_zh_alone"), "value_zh")
        return self


class _RejectedExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.REJECTED
    names: ClassVar[dict[str, Subject]] = {"worker": Subject.WORKER, "task": Subject.TASK}
    rejected: Annotated[
        Ident, AfterValidator(member_of((*REJECT_REASONS, "any"), "rejection reason"))
    ]
    worker: Text = ""
    task: Text = ""
    count: Count = 0


class _EffectExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.EFFECT
    effect: Ident
    applied: Count = 0


class _ViolationExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.VIOLATION
    violation: Annotated[Ident, AfterValidator(member_of((*VIOLATIONS, "any"), "violation"))]
    count: Count = 0


_MetricBound = Annotated[int, BeforeValidator(duration(allow_zero=True))]


class _MetricExpect(_ExpectTable):
    subject: ClassVar[Subject] = Subject.METRIC
    metric: Annotated[Ident, AfterValidator(member_of(METRICS, "metric"))]
    # recovery_time's bounds are durations, wasted_steps' are counts: read once the metric
    # is known (in _bounds), so both are taken as they come here.
    min: Any = None
    max: Any = None

    @model_validator(mode="after")
    def _bounds(self) -> "_MetricExpect":
        for key in ("min", "max"):
            raw = getattr(self, key)
            if raw is None:
                continue
            try:
                if self.metric == "recovery_time":
                    value = duration(allow_zero=True)(raw)
                else:
                    value = _int_in(raw, 0, 2**62)
            except PydanticCustomError as err:
                ctx = err.context or {}
                zh = ctx.get("zh")
                raise table_error(
                    (f"{key}{ctx.get('rest', '')}", f"{key}{zh}" if zh else "")
                ) from None
            setattr(self, key, value)
        if isinstance(self.min, int) and isinstance(self.max, int) and self.min > self.max:
            raise table_error(said("min_above_max", metric=self.metric))
        return self


def _int_in(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(
            f" must be an integer, got {show(value)}",
            file_mistake("must_be_int", "zh", name="", got=show(value)),
        )
    if value < low:
        raise field_error(*said("at_least", name="", low=low, got=value))
    if value > high:
        raise field_error(*said("too_large", value=value, high=high))
    return value


_EXPECT_TABLES: Final[tuple[type[_ExpectTable], ...]] = (
    _TaskExpect,
    _WorkerExpect,
    _LedgerExpect,
    _RejectedExpect,
    _EffectExpect,
    _ViolationExpect,
    _MetricExpect,
)
# Each expectation subject, with the other keys its inline table may have.
EXPECT_SUBJECTS: Final = {t.subject: keys_of(t, leave_out=(t.subject,)) for t in _EXPECT_TABLES}
# Each subject's keys that name a worker or a task (the subject's own key included).
EXPECT_NAMES: Final = {t.subject: t.names for t in _EXPECT_TABLES}
_ALL_EXPECT_KEYS: Final = tuple(
    dict.fromkeys(k for subject, keys in EXPECT_SUBJECTS.items() for k in (subject, *keys))
)


def _subject_of(item: Any) -> Subject | None:
    """Which subject an expectation names (`rejected` wins: it may also name a worker)."""
    if not isinstance(item, dict):
        return None
    if Subject.REJECTED in item:
        return Subject.REJECTED
    named = [k for k in item if k in EXPECT_SUBJECTS]
    return Subject(named[0]) if len(named) == 1 else None


def _one_subject(item: Any) -> Any:
    if not isinstance(item, dict):
        raise table_error(
            (
                f"each expectation must be an inline table, got {type_name(item)}",
                file_mistake("expect_not_table", "zh", got=type_word(item, "zh")),
            )
        )
    if _subject_of(item) is not None:
        return item
    named = [k for k in item if k in EXPECT_SUBJECTS]
    if len(named) > 1:
        raise table_error(said("expect_two_subjects", one=named[0], two=named[1]))
    first = next(iter(item), None)
    if first is not None and first not in _ALL_EXPECT_KEYS:
        raise table_error(
            (
                f'unknown key "{first}" in an expectation{suggest(first, _ALL_EXPECT_KEYS)}',
                file_mistake(
                    "expect_unknown_key",
                    "zh",
                    key=first,
                    hint=suggest_word(first, _ALL_EXPECT_KEYS, "zh"),
                ),
            )
        )
    raise table_error(
        (
            "an expectation needs a subject: one of " + ", ".join(EXPECT_SUBJECTS),
            file_mistake("expect_no_subject", "zh", valid="、".join(EXPECT_SUBJECTS)),
        )
    )


_AnyExpect = Annotated[
    Annotated[
        Annotated[_TaskExpect, Tag(Subject.TASK)]
        | Annotated[_WorkerExpect, Tag(Subject.WORKER)]
        | Annotated[_LedgerExpect, Tag(Subject.LEDGER)]
        | Annotated[_RejectedExpect, Tag(Subject.REJECTED)]
        | Annotated[_EffectExpect, Tag(Subject.EFFECT)]
        | Annotated[_ViolationExpect, Tag(Subject.VIOLATION)]
        | Annotated[_MetricExpect, Tag(Subject.METRIC)],
        Discriminator(_subject_of),
    ],
    BeforeValidator(_one_subject),
]


# -- playback steps ----

_QUESTION_PARTS: Final = ("choices", "choices_zh", "answer", "why", "why_zh")
# The follow-up: the same parts as the question, each key with this in front.
FOLLOW_UP: Final = "follow_up"
_FOLLOW_UP_PARTS: Final = tuple(f"{FOLLOW_UP}_{part}" for part in _QUESTION_PARTS)


def _check_choices(
    prefix: str, choices: list[str] | None, choices_zh: list[str] | None, answer: int | None
) -> None:
    """The rules a question's choices keep (the follow-up's too, its keys under `prefix`)."""
    n = len(choices) if choices is not None else None
    if choices_zh is not None and n is None:
        raise table_error(said("choices_zh_alone", p=prefix), f"{prefix}choices_zh")
    if answer is not None and n is None:
        raise table_error(said("answer_alone", p=prefix), f"{prefix}answer")
    if n is not None and answer is None:
        raise table_error(said("choices_no_answer", p=prefix, n=n), f"{prefix}choices")
    if n is not None and answer is not None and answer > n:
        raise table_error(
            said("answer_out_of_range", p=prefix, n=n, answer=answer), f"{prefix}answer"
        )
    if n is not None and choices_zh is not None and len(choices_zh) != n:
        raise table_error(
            said("choices_zh_count", p=prefix, zh=len(choices_zh), n=n), f"{prefix}choices_zh"
        )


class StepTable(Table):
    say: Text | None = None
    say_zh: Text | None = None
    action: _AnyAction | None = Field(None, alias="do")
    expect: list[_AnyExpect] | None = None
    ask: NonBlank | None = None
    ask_zh: NonBlank | None = None
    choices: Choices | None = None
    choices_zh: Choices | None = None
    answer: Annotated[int, bounded(1, MAX_CHOICES)] | None = None
    why: Text | None = None
    why_zh: Text | None = None
    # The panel the step is about, opened by the app after it and shown on the exported page.
    panel: Annotated[str, Strict(), AfterValidator(member_of(PANELS, "panel"))] | None = None
    follow_up: NonBlank | None = None
    follow_up_zh: NonBlank | None = None
    follow_up_choices: Choices | None = None
    follow_up_choices_zh: Choices | None = None
    follow_up_answer: Annotated[int, bounded(1, MAX_CHOICES)] | None = None
    follow_up_why: Text | None = None
    follow_up_why_zh: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _gather_action(cls, data: Any) -> Any:
        """`do` and its keys sit flat in the [[step]] table; the action model reads them as
        one table. Without `do`, an action's key stays behind and is reported as such."""
        if not isinstance(data, dict) or "do" not in data:
            return data
        own = {k: v for k, v in data.items() if k not in ACTION_KEYS}
        own["do"] = {"do": data["do"], **{k: v for k, v in data.items() if k in ACTION_KEYS}}
        return own

    @model_validator(mode="after")
    def _whole(self) -> "StepTable":
        asked = self.ask is not None or self.ask_zh is not None
        followed = self.follow_up is not None or self.follow_up_zh is not None
        content = (self.say, self.say_zh, self.action, self.expect, self.ask, self.ask_zh)
        if all(part is None for part in content):
            raise table_error(said("empty_step"))
        for key in (*_QUESTION_PARTS, FOLLOW_UP, f"{FOLLOW_UP}_zh"):
            if getattr(self, key) is not None and not asked:
                raise table_error(said("without_question", key=key), key)
        for key in _FOLLOW_UP_PARTS:
            if getattr(self, key) is not None and not followed:
                raise table_error(said("without_follow_up", key=key, follow_up=FOLLOW_UP), key)
        _check_choices("", self.choices, self.choices_zh, self.answer)
        _check_choices(
            f"{FOLLOW_UP}_",
            self.follow_up_choices,
            self.follow_up_choices_zh,
            self.follow_up_answer,
        )
        return self

    def question(self) -> Question | None:
        if self.ask is None and self.ask_zh is None:
            return None
        follow_up = None
        if self.follow_up is not None or self.follow_up_zh is not None:
            follow_up = Question(
                ask=self.follow_up,
                ask_zh=self.follow_up_zh,
                choices=tuple(self.follow_up_choices or ()),
                choices_zh=tuple(self.follow_up_choices_zh or ()),
                answer=self.follow_up_answer,
                why=self.follow_up_why,
                why_zh=self.follow_up_why_zh,
            )
        return Question(
            ask=self.ask,
            ask_zh=self.ask_zh,
            choices=tuple(self.choices or ()),
            choices_zh=tuple(self.choices_zh or ()),
            answer=self.answer,
            why=self.why,
            why_zh=self.why_zh,
            follow_up=follow_up,
        )


# -- the document ----


class ScenarioFile(Table):
    title: NonBlank
    title_zh: Text | None = None
    summary: Text | None = None
    summary_zh: Text | None = None
    mode: ModeName = Mode.CORRECT.value
    seed: Annotated[int, bounded(-MAX_SEED, MAX_SEED)] = 0
    lease_ttl: Duration | None = None
    heartbeat_every: Duration | None = None
    poll_every: Duration | None = None
    renew_deadline: Duration | None = None
    self_fencing: Flag = False
    workers: list[WorkerTable] = Field(default_factory=list, max_length=MAX_WORKERS)
    tasks: list[TaskTable] = Field(default_factory=list, max_length=MAX_TASKS)
    step: list[StepTable] = Field(default_factory=list, max_length=MAX_PLAYBACK_STEPS)


TOP_KEYS: Final = keys_of(ScenarioFile)
WORKER_KEYS: Final = keys_of(WorkerTable)
TASK_KEYS: Final = keys_of(TaskTable)
STEP_KEYS: Final = keys_of(StepTable) + ACTION_KEYS
# The tables written as arrays of tables, and the word for one entry.
ARRAYS: Final = {"workers": "worker", "tasks": "task", "step": "step"}
