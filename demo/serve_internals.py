"""Every part of textual-serve that `serve` relies on beyond its documented hooks, in one place.

textual-serve (pinned below 1.2 in pyproject.toml) starts one app process per browser tab
in `AppService` and keeps the process in a private attribute. `serve` needs it for one
thing: an app that does not leave when asked (it may be stuck writing a frame nobody reads)
is ended by signal, so that no connection leaves a process behind. The page served
replaces textual-serve's own template and must keep what its script reads. Each name here
is checked by `tests/serve/test_serve.py`, so an upgrade that renames one fails loudly there,
not as a process left running.
"""

from asyncio.subprocess import Process

from textual_serve.app_service import AppService

# The private attribute used below: the test checks a new AppService still has it.
INTERNALS = ("_process",)

# What textual-serve's script (static/js/textual.js) reads from the page: the element it
# turns into a terminal, and that element's two data attributes. The test checks the script
# still names each.
PAGE_CONTRACT = ("textual-terminal", "sessionWebsocketUrl", "fontSize")
# The files of textual-serve's static folder the page links to.
STATIC_ASSETS = ("css/xterm.css", "js/textual.js", "fonts/RobotoMono-VariableFont_wght.ttf")


def app_process(service: AppService) -> Process | None:
    """The app process a service started (None before `start`)."""
    process: Process | None = service._process
    return process
