"""The words of `borrowed-keys serve`: the pages it answers a browser with, and what it says
in its terminal."""

from typing import Final

from core.scenarios.glossary import Word

SERVE: Final[dict[str, Word]] = {
    # the pages `serve` answers a browser with
    "app_name": ("Borrowed Keys", "借来的钥匙"),
    "serve_full_title": ("{name}: all sessions in use", "{name}：会话已满"),
    "serve_full_heading": ("{name} is full", "{name}已满"),
    # what `serve` says in its terminal, in the language it serves (after `PROG: `)
    "serve_serving": (
        "Serving Borrowed Keys at {url} — Ctrl+C to stop\n"
        "  at most {limit} tabs at once (--max-sessions); the s key saves into {folder}",
        "借来的钥匙在 {url} 上提供服务，按 Ctrl+C 停止\n"
        "  同时最多 {limit} 个标签页（--max-sessions）；按 s 保存到 {folder}",
    ),
    "serve_port_range": (
        "--port must be between 1 and 65535, not {port}",
        "--port 必须在 1 到 65535 之间，这里是 {port}",
    ),
    "serve_sessions_range": (
        "--max-sessions must be between 1 and 1000, not {n}",
        "--max-sessions 必须在 1 到 1000 之间，这里是 {n}",
    ),
    "serve_in_use": (
        "port {port} on {host} is in use; pick another with --port",
        "{host} 上的端口 {port} 已被占用：用 --port 换一个",
    ),
    "serve_privileged": (
        "port {port} needs more privileges; pick one above 1023 with --port",
        "端口 {port} 需要更高的权限：用 --port 选一个大于 1023 的",
    ),
    "serve_cannot_listen": ("cannot listen on {where}: {why}", "无法在 {where} 上监听：{why}"),
    "serve_open": (
        "warning: listening on {host}: anyone who can reach port {port} controls the app",
        "警告：正在 {host} 上监听，任何能连到端口 {port} 的人都能操控这个应用",
    ),
    "serve_full_text": (
        "This server runs at most {limit} session(s) at once (one per browser tab), and all "
        "are in use. Close a tab that shows the app, then reload this page.",
        "这台服务器同时最多运行 {limit} 个会话（每个浏览器标签页一个），现在都在使用中。"
        "请关掉一个显示本应用的标签页，再刷新此页。",
    ),
    "serve_full_more": (
        "Whoever started it can allow more with",
        "启动它的人可以用这个选项放宽上限：",
    ),
    "pick_hint": (
        "Enter opens · l language · ? help · q quit",
        "回车打开 · l 切换语言 · ? 帮助 · q 退出",
    ),
    "open": ("Open", "打开"),
    "no_bundled": ("(no bundled scenarios found)", "（没有找到内置场景）"),
}
