"""Every private part of Textual's bindings the app relies on, in one place.

A binding's description and tooltip are fixed when the class is made (`BINDINGS`), and
Textual has no public way to change them; the main screen speaks two languages, so its
bindings are relabelled in place here. `tests/app/test_tui_internals.py` checks the names are
still there and still work, so a Textual upgrade that renames one fails loudly there, not
as a key bar stuck in the other language.
"""

import dataclasses
from collections.abc import Callable

from textual.binding import Binding
from textual.dom import DOMNode

# The attributes used below: the test checks each exists.
INTERNALS = ("_bindings",)


def relabel_bindings(node: DOMNode, words: Callable[[Binding], tuple[str, str] | None]) -> None:
    """Give each of `node`'s own bindings the (description, tooltip) `words` returns for it
    (None: leave it), then let the footer and the palette see the new words."""
    key_to_bindings = node._bindings.key_to_bindings
    for key, items in key_to_bindings.items():
        fresh = []
        for binding in items:
            said = words(binding)
            if said is not None:
                binding = dataclasses.replace(binding, description=said[0], tooltip=said[1])
            fresh.append(binding)
        key_to_bindings[key] = fresh
    node.refresh_bindings()
