"""The words of what went wrong, in both languages: a scenario file's mistakes, a timing
mistake in a file, the engine's errors, and how a run says it stopped on one."""

from typing import Final

from core.scenarios.word_table import Word, lookup

# A timing mistake in a file, in Chinese, by the rule it breaks (the English is the
# engine's own message). The keys are the file's, as it spells them.
CONFIG_MISTAKES: Final[dict[str, str]] = {
    "ttl_positive": "lease_ttl 必须为正，现在是 {ttl}",
    "heartbeat_positive": "heartbeat_every 必须为正",
    "deadline_positive": "renew_deadline 必须为正",
    "poll_positive": "poll_every 必须为正",
    "ttl_too_short": "lease_ttl 太短，分不出心跳的间隔",
    "ttl_above_deadline": "lease_ttl（{ttl}）必须长于 renew_deadline（{deadline}）",
    "deadline_above_heartbeat": (
        "renew_deadline（{deadline}）必须长于 heartbeat_every（{heartbeat}）"
    ),
    "heartbeat_below_long_deadline": (
        "heartbeat_every（{heartbeat}）必须短于误区二（租期拉得极长）的续约截止时长（{deadline}）"
    ),
}


# A mistake in a scenario file, by its kind, in both languages: the English is what the
# loader has always said (tests and docs quote it), the Chinese what a zh run says instead.
# Keys, ids and values stay as the file spells them; the sentence around them is the run's.
FILE_MISTAKES: Final[dict[str, Word]] = {
    "unknown_key": ('unknown key "{key}" in {table}{hint}', "{table}里没有 “{key}” 这一项{hint}"),
    "the_scenario": ("the scenario", "剧本"),
    "table": ("[[{name}]]", "[[{name}]]"),
    "did_you_mean": (' (did you mean "{close}"?)', "（是不是想写 “{close}”？）"),
    "action_takes_no_key": (
        'action "{action}" takes no key "{key}"',
        "动作 “{action}” 没有 “{key}” 这一项",
    ),
    "key_without_action": (
        '"{key}" without an action: add do = "..."',
        '有 “{key}” 却没有动作：加上 do = "..."',
    ),
    "unknown_expect_key": (
        'unknown key "{key}" in a {subject} expectation{hint}; it may have {valid}',
        "对{subject}的检查里没有 “{key}” 这一项{hint}；可以写的有 {valid}",
    ),
    "unknown_action": ('unknown action "{action}"{hint}', "没有 “{action}” 这个动作{hint}"),
    "do_not_string": ("do must be a string, got {got}", "do 必须是字符串，这里是{got}"),
    "missing_title": (
        'missing title: add a line like title = "The fog"',
        '缺少标题：加一行，例如 title = "The fog"',
    ),
    "action_needs": ('action "{action}" needs "{key}"', "动作 “{action}” 需要 “{key}”"),
    "worker_needs_id": (
        'a worker needs an id, like id = "acheng"',
        '每个执行者都要有 id，例如 id = "acheng"',
    ),
    "task_needs_id": (
        'a task needs an id, like id = "sixth-floor"',
        '每个任务都要有 id，例如 id = "sixth-floor"',
    ),
    "must_be_string": ("{name} must be a string, got {got}", "{name} 必须是字符串，这里是{got}"),
    "must_be_bool": (
        "{name} must be true or false, got {got}",
        "{name} 必须是 true 或 false，这里是{got}",
    ),
    "must_be_int": ("{name} must be an integer, got {got}", "{name} 必须是整数，这里是{got}"),
    "at_least": ("{name} must be at least {low}, got {got}", "{name} 至少是 {low}，这里是 {got}"),
    "at_most": ("{name} is too large: {got} (at most {high})", "{name} 太大：{got}（最多 {high}）"),
    "must_be_tables": (
        "{key} must be an array of tables, written [[{key}]]",
        "{key} 必须是表的数组，写成 [[{key}]]",
    ),
    "unknown_member": (
        'unknown {what} "{value}"{hint}; {listing} {valid}',
        "没有 “{value}” 这个{what}{hint}；可用的{what}有 {valid}",
    ),
    "mode": ("mode", "模式"),
    "kind": ("kind", "任务类型"),
    "duplicate_id": ('duplicate {what} id "{id}"', "{what} id “{id}” 重复了"),
    "worker": ("worker", "执行者"),
    "task": ("task", "任务"),
    "ledger": ("ledger", "总册"),
    "rejected": ("rejected", "拒收"),
    "effect": ("effect", "副作用"),
    "violation": ("violation", "违规"),
    "metric": ("metric", "指标"),
    "unknown_worker": ('unknown worker "{id}"{hint}', "没有 “{id}” 这个执行者{hint}"),
    "unknown_task": ('unknown task "{id}"{hint}', "没有 “{id}” 这个任务{hint}"),
    "none_yet_workers": (" (there are no workers yet)", "（这时还没有执行者）"),
    "none_yet_tasks": (" (there are no tasks yet)", "（这时还没有任务）"),
    "bad_toml": ("bad TOML: {message}", "TOML 写法有误：{message}"),
    "toml_column": (" (column {n})", "（第 {n} 列）"),
    "toml_end": (" (at the end of the file)", "（在文件末尾）"),
    "toml_too_deep": ("bad TOML: nested too deeply", "TOML 写法有误：嵌套太深"),
    # a value's problem, told after its key: `lease_ttl` + the rest
    "bad_duration": (
        ': bad duration {value}: write it like "250ms", "10s", "2m" or "1h"',
        "：时长 {value} 写不对，要写成 “250ms”、“10s”、“2m” 或 “1h”",
    ),
    "duration_type": (
        ' must be a duration like "10s", got {got}',
        " 必须是时长，例如 “10s”，这里是{got}",
    ),
    "duration_negative": (" must not be negative, got {value}", " 不能是负数，这里是 {value}"),
    "duration_zero": (" must be longer than zero, got {value}", " 必须大于零，这里是 {value}"),
    "duration_too_long": (
        " is too long: {value} (at most 1 day, 24h)",
        " 太长：{value}（最多一天，24h）",
    ),
    "duration_too_large": (": duration {value} is far too large", "：时长 {value} 大得离谱"),
    "duration_bare_number": (
        ' must be written with its unit, like "{value}s" or "{value}ms", '
        "got the bare number {value}",
        " 必须带上单位，例如 “{value}s” 或 “{value}ms”，这里只写了数字 {value}",
    ),
    "duration_not_finite": (
        " must be a finite duration, got {value}",
        " 必须是有限的时长，这里是 {value}",
    ),
    "not_empty": (" must not be empty", " 不能为空"),
    "no_such_scenario": (
        "no such file, nor a bundled scenario of that name ({hint}"
        "`borrowed-keys list` names them all)",
        "没有这个文件，也没有叫这个名字的内置剧本（{hint}borrowed-keys list 会列出全部）",
    ),
    "near_names": ("did you mean {names}? ", "是不是想写 {names}？"),
    "or": (" or ", " 或 "),
    "no_such_file": ("cannot read: no such file", "读不到：没有这个文件"),
    "a_directory": ("cannot read: it is a directory, not a file", "读不到：这是目录，不是文件"),
    "empty_file": ("empty file: a scenario needs at least a title", "空文件：剧本至少要有标题"),
    "not_utf8": (
        "not UTF-8 text (byte 0x{byte}); save the file as UTF-8",
        "不是 UTF-8 文本（字节 0x{byte}）；请把文件存成 UTF-8",
    ),
    "utf16": (
        "not UTF-8 text (it is UTF-16); save the file as UTF-8",
        "不是 UTF-8 文本（这是 UTF-16）；请把文件存成 UTF-8",
    ),
    "manual_on_autopilot": (
        '"{action}" is a manual operation, but worker "{worker}" is on autopilot '
        "(give it autopilot = false)",
        "“{action}” 要手动操作，“{worker}” 却是 autopilot（自动运行）：写上 autopilot = false",
    ),
    "empty_step": ("empty step: give it say, do or expect", "空步骤：给它写上 say、do 或 expect"),
    "without_question": (
        '"{key}" without a question: add ask = "..."',
        '有 “{key}” 却没有问题：加上 ask = "..."',
    ),
    "without_follow_up": (
        '"{key}" without a follow-up question: add {follow_up} = "..."',
        '有 “{key}” 却没有追问：加上 {follow_up} = "..."',
    ),
    "value_zh_alone": (
        '"value_zh" without value: add value = "..."',
        '有 “value_zh” 却没有 “value”：加上 value = "..."',
    ),
    # a question's choices (a follow-up's keys have `p` = "follow_up_" in front)
    "choices_zh_alone": (
        '"{p}choices_zh" without choices: add {p}choices = [...]',
        "有 “{p}choices_zh” 却没有 “{p}choices”：加上 {p}choices = [...]",
    ),
    "answer_alone": (
        '"{p}answer" without choices: add {p}choices = [...]',
        "有 “{p}answer” 却没有 “{p}choices”：加上 {p}choices = [...]",
    ),
    "choices_no_answer": (
        "{p}choices need an answer: add {p}answer = N, the right one's number (1 to {n})",
        "{p}choices 要有答案：加上 {p}answer = N，对的那个选项的序号（1 到 {n}）",
    ),
    "answer_out_of_range": (
        "{p}answer must be one of the choices, 1 to {n}, got {answer}",
        "{p}answer 必须是某个选项的序号，1 到 {n}，这里是 {answer}",
    ),
    "choices_zh_count": (
        "{p}choices_zh has {zh} answers, {p}choices has {n}: "
        "give both the same answers in the same order",
        "{p}choices_zh 有 {zh} 个选项，{p}choices 有 {n} 个：两边要写同样的选项，次序相同",
    ),
    "choice_n": ("choice {n}", "第 {n} 个选项"),
    "choice_n_in": ("choice {n} in {key}", "{key} 的第 {n} 个选项"),
    "choices_not_array": (
        '{key} must be an array of short answers, like ["yes", "no"]',
        '{key} 必须是简短答案的数组，例如 ["yes", "no"]',
    ),
    "choices_count": (
        "{key} must have {low} to {high} answers, got {count}",
        "{key} 要有 {low} 到 {high} 个选项，这里有 {count} 个",
    ),
    # a size (a heartbeat's payload), after its key
    "size_type": (' must be a size like "2MB", got {got}', " 必须是大小，例如 “2MB”，这里是{got}"),
    "size_negative": (" must not be negative, got {value}", " 不能是负数，这里是 {value}"),
    "size_unread": (
        ' must be a size like "2MB", "512KB" or "0", got "{value}"',
        " 必须是大小，例如 “2MB”、“512KB” 或 “0”，这里是 “{value}”",
    ),
    "size_too_large": (" is too large: {value} (at most 1GB)", " 太大：{value}（最多 1GB）"),
    # text a terminal would not simply print, after its key
    "id_not_printable": (
        " must be one line of printable text; it holds {char}",
        " 必须是一行可打印的文字，里面却有{char}",
    ),
    "text_one_line": (" must be one line; it holds {char}", " 必须只占一行，里面却有{char}"),
    "text_no_control": (
        " must hold no control characters; it holds {char}",
        " 不能含控制字符，里面却有{char}",
    ),
    "char_line_break": ("a line break (U+{code})", "换行符（U+{code}）"),
    "char_nul": ("a NUL character (U+0000)", "空字符 NUL（U+0000）"),
    "char_escape": (
        "an escape character (U+001B, which starts a terminal's control sequence)",
        "转义字符（U+001B，终端控制序列由它开头）",
    ),
    "char_surrogate": (
        "a lone surrogate (U+{code}, bytes that are not UTF-8 text)",
        "残缺的半个字符（U+{code}，不是 UTF-8 文本的字节）",
    ),
    "char_unprintable": (
        "a character that is not printable (U+{code})",
        "不可打印的字符（U+{code}）",
    ),
    "too_much_work": (
        "too much work: the tasks add up to more than {high} steps",
        "工作量太大：任务加起来超过 {high} 步",
    ),
    "too_long_to_simulate": (
        "this run would be too long to simulate: about {wakeups} worker wake-ups by here "
        "(at most {high}); advance less time or poll less often",
        "这一场太长，模拟不了：到这里执行者大约要醒来 {wakeups} 次（最多 {high} 次）；"
        "少推进一些时间，或者轮询得慢一些",
    ),
    "too_many_of": ("too many {what} (at most {high})", "{what}太多（最多 {high} 个）"),
    "too_large_file": (
        "file too large (a scenario is at most 1 MB)",
        "文件太大（一个剧本最多 1 MB）",
    ),
    "binary_byte": (
        "binary data (a NUL byte), not a TOML text",
        "这是二进制数据（含 NUL 字节），不是 TOML 文本",
    ),
    "binary_char": (
        "binary data (a NUL character), not a TOML text",
        "这是二进制数据（含 NUL 字符），不是 TOML 文本",
    ),
    "lone_surrogate": ("not UTF-8 text (a lone surrogate)", "不是 UTF-8 文本（有残缺的半个字符）"),
    "too_deep": ("nested too deeply", "嵌套太深"),
    # the system's own reason (strerror) stays as it is
    "cannot_read": ("cannot read: {why}", "读不到：{why}"),
    "min_above_max": ("metric {metric}: min is above max", "指标 {metric}：min 比 max 还大"),
    "expect_not_table": (
        "each expectation must be an inline table, got {got}",
        "每条检查都必须是内联表，这里是{got}",
    ),
    "expect_two_subjects": (
        'an expectation names one subject, this one names "{one}" and "{two}"',
        "一条检查只能针对一样东西，这条同时写了 “{one}” 和 “{two}”",
    ),
    "expect_unknown_key": (
        'unknown key "{key}" in an expectation{hint}',
        "检查里没有 “{key}” 这一项{hint}",
    ),
    "expect_no_subject": (
        "an expectation needs a subject: one of {valid}",
        "每条检查都要写明针对什么，可写的有 {valid}",
    ),
    "expect_not_array": (
        'expect must be an array of inline tables, like expect = [{{ task = "t1", status = '
        '"done" }}], got {got}',
        'expect 必须是内联表的数组，例如 expect = [{{ task = "t1", status = "done" }}]，'
        "这里是{got}",
    ),
    "too_many": (
        "too many {what}: {count} (at most {high})",
        "{what}太多：{count} 个（最多 {high} 个）",
    ),
    "too_long_text": (
        "{name} is too long (at most {high} characters)",
        "{name} 太长（最多 {high} 个字符）",
    ),
    "number_type": (" must be a number, got {got}", " 必须是数字，这里是{got}"),
    "above_zero": (" must be above zero, got {value}", " 必须大于零，这里是 {value}"),
    "too_large": (" is too large: {value} (at most {high})", " 太大：{value}（最多 {high}）"),
    "task status": ("task status", "任务状态"),
    "worker state": ("worker state", "执行者状态"),
    "rejection reason": ("rejection reason", "拒收原因"),
    "panel": ("panel", "面板"),
    "workers": ("workers", "执行者"),
    "tasks": ("tasks", "任务"),
    "steps": ("steps", "步骤"),
    # TOML's kinds of value, as a mistake names what it found
    "type_bool": ("a boolean", "布尔值"),
    "type_int": ("an integer", "整数"),
    "type_float": ("a number with a fraction", "小数"),
    "type_str": ("a string", "字符串"),
    "type_list": ("an array", "数组"),
    "type_dict": ("a table", "表"),
    "type_datetime": ("a datetime", "日期时间"),
    "type_date": ("a date", "日期"),
    "type_time": ("a time", "时刻"),
}


# Every error the core raises on purpose that can reach a person, by its `why` (the
# engine's Why, the simulation's Unfit), in both languages. The English is what the core
# has always said (a test holds each row to the error's own message); `{message}` stands
# for the core's own line where it is more than a template (a store's path and driver
# words), which the Chinese quotes as the store's words. Ids stay as the run spells them;
# a worker the story knows goes by its name.
ENGINE_ERRORS: Final[dict[str, Word]] = {
    # the engine's
    "general": ("{message}", "核心拒绝了这一步（原话：{message}）"),
    "config": ("{message}", "租约时长的设定不成立：{rule}"),
    "store": ("{message}", "存储无法使用（存储的原话：{message}）"),
    "clock_behind": (
        "{message}",
        "本进程的时钟落后于存储里已经写下的时刻：在 SQLite 上每个进程用自己的时钟判断租约，"
        "时钟对不上的进程无法被安全地判断，所以停下（存储的原话：{message}）",
    ),
    "schema_version": (
        "{message}",
        "这个存储的表结构版本与本程序不符，文件原样未动（存储的原话：{message}）",
    ),
    "store_closed": ("{message}", "存储已经关闭，不再接受新的事务"),
    "disk_full": (
        "{message}",
        "磁盘已满：这个事务没有写进去，数据库里仍是此前提交的内容",
    ),
    "foreign_log": (
        "{message}",
        "数据库旁边的预写日志不属于它，两者都原样未动（存储的原话：{message}）",
    ),
    "connection_lost": ("{message}", "打开存储时连接断了，可以再试一次"),
    "unknown_task": ("unknown task {task!r}", "没有 “{task}” 这个任务"),
    "duplicate_task": ("task {task!r} already exists", "任务 “{task}” 已经存在"),
    "invalid_payload": ("{message}", "这份数据存不成 JSON，存储什么也没写"),
    "invalid_argument": ("{message}", "给存储的参数类型或范围不对，存储什么也没写"),
    "invalid_id": ("{message}", "这个编号不是一行可显示的文字，存储什么也没写"),
    "lease_mismatch": ("{message}", "这份租约从来不是为这个任务签发的"),
    "not_waiting": (
        "cannot {operation} {task}: it is {status}, not waiting for approval",
        "无法{operation}任务 “{task}”：它现在{status}，并不在等待审批",
    ),
    "lease_rejected": ("{message}", "{refusal}"),
    "lease_lost": (
        "{message}",
        "{worker}失去了任务 “{task}” 的租约，手上的工作已经停下（存储的原话：{message}）",
    ),
    "not_claimed": ("{message}", "领不到任务 “{task}”（存储的原话：{message}）"),
    "downstream_refused": ("{message}", "下游服务拒绝了这次写入或调用（服务的原话：{message}）"),
    # the simulation's: an act that does not fit the run
    "unknown_worker": ("{action}: unknown worker {worker!r}", "没有 “{worker}” 这个执行者"),
    "worker_exists": (
        "add_worker: worker {worker!r} already exists",
        "执行者{worker}已经在了",
    ),
    "no_lease": (
        "{action}: {worker} holds no lease in its memory",
        "{worker}的记忆里没有租约，{action}做不成",
    ),
    "worker_dead": ("{message}", "{worker}已死：先重启它（u）"),
    "does_not_fit": ("{action}: {cause}", "这一步做不成：{cause}"),
    "time_backwards": ("time cannot go backwards", "时间不能倒流"),
    "unknown_action": ("unknown action {action!r}", "没有 “{action}” 这个动作"),
    "save_needs_sqlite": (
        "only a run on SQLite can be saved and restored",
        "只有用 SQLite 的运行才能保存和恢复",
    ),
    "save_needs_manual": (
        "a run with autopilot workers cannot be saved",
        "有执行者在自动运行，这次运行不能保存",
    ),
    "stalled": ("{worker} is stalled; resume it first", "{worker}停顿着：先让它恢复"),
    "nothing_to_claim": ("nothing to claim", "没有可以领取的任务"),
    "heartbeat_frozen": ("{worker}'s heartbeat is frozen", "{worker}的心跳冻结了"),
    "partitioned": ("{worker} is partitioned from the store", "{worker}与存储之间断了桥"),
}

# How a scenario's run says it stopped on such an error.
RUN_STOPPED: Final[dict[str, Word]] = {
    "cannot_start": ("cannot start the run: {error}", "这次运行无法开始：{error}"),
    "step_cannot_run": ("step {number} cannot run: {error}", "第 {number} 步无法执行：{error}"),
}


def file_mistake(name: str, lang: str, /, **fill: object) -> str:
    """One of a scenario file's mistakes in `lang`, its blanks filled."""
    return lookup(FILE_MISTAKES, name, lang, **fill)


def type_word(value: object, lang: str) -> str:
    """What kind of TOML value this is ("an integer", "整数"); dates by their Python name."""
    for kind, name in (
        (bool, "bool"),
        (int, "int"),
        (float, "float"),
        (str, "str"),
        (list, "list"),
        (dict, "dict"),
    ):
        if isinstance(value, kind):
            return file_mistake(f"type_{name}", lang)
    if lang != "zh":
        return f"a {type(value).__name__}"
    return file_mistake(f"type_{type(value).__name__}", lang)


def config_mistake(err: Exception, lang: str) -> str:
    """A ConfigError in `lang`: its Chinese by the rule it names, else its own message."""
    rule, fill = getattr(err, "rule", ""), getattr(err, "fill", {})
    if lang != "zh" or rule not in CONFIG_MISTAKES:
        return str(err)
    return CONFIG_MISTAKES[rule].format(**fill)
