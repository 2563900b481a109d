"""From bytes to a TOML document, and where blocks and keys are in the raw text.

tomllib gives no line numbers for values, so the line of a key is found by scanning the raw
text: the N-th `[[step]]` header, then the key inside that block, falling back to the
block's header line and then to line 1.
"""

import re
import tomllib
from typing import Any

from core.scenarios.format.model import MAX_FILE_BYTES, ScenarioError, said
from core.scenarios.glossary import file_mistake


def decode(text: str | bytes, path: str) -> str:
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise ScenarioError(path, None, *said("too_large_file"))
        if text.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ScenarioError(path, 1, *said("utf16"))
        if b"\x00" in text:
            line = text[: text.index(b"\x00")].count(b"\n") + 1
            raise ScenarioError(path, line, *said("binary_byte"))
        try:
            source = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text[: exc.start].count(b"\n") + 1
            bad = text[exc.start]
            raise ScenarioError(path, line, *said("not_utf8", byte=f"{bad:02x}")) from None
    else:
        if len(text) > MAX_FILE_BYTES:
            raise ScenarioError(path, None, *said("too_large_file"))
        source = text
        if "\x00" in source:
            line = source[: source.index("\x00")].count("\n") + 1
            raise ScenarioError(path, line, *said("binary_char"))
        bad_at = next((i for i, ch in enumerate(source) if 0xD800 <= ord(ch) <= 0xDFFF), None)
        if bad_at is not None:
            line = source[:bad_at].count("\n") + 1
            raise ScenarioError(path, line, *said("lone_surrogate"))
    if source.startswith("\ufeff"):
        source = source[1:]
    if not source.strip():
        raise ScenarioError(path, 1, *said("empty_file"))
    return source


_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def parse_toml(source: str, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = source.count("\n") + 1
        where: dict[str, str] = {"en": "", "zh": ""}
        at = _TOML_AT.search(message)
        if at:
            line = int(at.group(1))
            message = _TOML_AT.sub("", message)
            where = {lang: file_mistake("toml_column", lang, n=at.group(2)) for lang in where}
        elif _TOML_END.search(message):
            message = _TOML_END.sub("", message)
            where = {lang: file_mistake("toml_end", lang) for lang in where}
        message = message[:1].lower() + message[1:]
        # the parser's own words stay; a zh run gets them between a Chinese lead and place
        raise ScenarioError(
            path,
            line,
            f"bad TOML: {message}{where['en']}",
            file_mistake("bad_toml", "zh", message=message + where["zh"]),
        ) from None
    except RecursionError:
        raise ScenarioError(
            path,
            _deepest_line(source),
            "bad TOML: nested too deeply",
            file_mistake("toml_too_deep", "zh"),
        ) from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer with thousands of digits
        raise ScenarioError(
            path, 1, f"bad TOML: {exc}", file_mistake("bad_toml", "zh", message=exc)
        ) from None


def _deepest_line(source: str) -> int:
    """The line where arrays and inline tables first reach their deepest nesting (the parser
    gave up somewhere in there, without saying where). Strings and comments are skipped."""
    depth = deepest = 0
    line = at = 1
    quote = ""
    in_comment = False
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\n":
            line += 1
            in_comment = False
        elif in_comment:
            pass
        elif quote:
            if ch == "\\" and quote == '"':
                i += 1  # an escaped character, whatever it is
            elif source.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif ch == "#":
            in_comment = True
        elif ch in "\"'":
            quote = ch * 3 if source.startswith(ch * 3, i) else ch
            i += len(quote) - 1
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, line
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return at


# -- finding lines in the raw text -----------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]#]*?)\s*\]\]?\s*(?:#.*)?$")


def _bare(key: str) -> str:
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'":
        return key[1:-1]
    return key


class Lines:
    """Where blocks and keys are in the raw text (a heuristic; it never raises)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.total = max(1, len(self.lines))
        # (start line, end line exclusive, header name, is array, index among same name)
        self.blocks: list[tuple[int, int, str, bool, int]] = []
        counts: dict[tuple[str, bool], int] = {}
        starts: list[tuple[int, str, bool]] = []
        for number, text in enumerate(self.lines, start=1):
            match = _HEADER.match(text)
            if match:
                is_array = match.group(1) == "[["
                name = ".".join(_bare(part) for part in match.group(2).split("."))
                starts.append((number, name, is_array))
        first = starts[0][0] if starts else self.total + 1
        self.root_end = first
        for i, (number, name, is_array) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else self.total + 1
            index = counts.get((name, is_array), 0)
            counts[(name, is_array)] = index + 1
            self.blocks.append((number, end, name, is_array, index))

    def block(self, name: str, index: int) -> tuple[int, int] | None:
        """The line range of the index-th `[[name]]` block (header line included)."""
        for start, end, block_name, is_array, i in self.blocks:
            if block_name == name and is_array and i == index:
                return start, end
        return None

    def nth_sub_block(self, name: str, index: int, sub: str, n: int) -> int | None:
        """The header line of the n-th `[[name.sub]]` inside the index-th `[[name]]` entry
        (which runs until the next `[[name]]` header), or None."""
        block = self.block(name, index)
        if block is None:
            return None
        nxt = self.block(name, index + 1)
        end = nxt[0] if nxt is not None else self.total + 1
        inside = [
            start
            for start, _end, block_name, is_array, _i in self.blocks
            if block_name == f"{name}.{sub}" and is_array and block[0] < start < end
        ]
        return inside[n] if n < len(inside) else None

    def key_in(self, start: int, end: int, key: str) -> int | None:
        pattern = re.compile(
            r"^\s*(?:" + re.escape(key) + r"|\"" + re.escape(key) + r"\"|'"
            r"" + re.escape(key) + r"')\s*="
        )
        for number in range(start, min(end, self.total + 1)):
            if pattern.match(self.lines[number - 1]):
                return number
        return None

    def top_key(self, key: str) -> int:
        found = self.key_in(1, self.root_end, key)
        if found is not None:
            return found
        for start, _end, name, _is_array, _i in self.blocks:
            if name == key or name.startswith(key + "."):
                return start
        return 1

    def entry_key(self, name: str, index: int, key: str | None = None) -> int:
        """The line of `key` in the index-th [[name]] block, else its header, else line 1."""
        block = self.block(name, index)
        if block is None:
            # Written as an inline array (`tasks = [{...}]`): the array's own line.
            return self.top_key(name)
        if key is not None:
            found = self.key_in(block[0] + 1, block[1], key)
            if found is not None:
                return found
        return block[0]

    def nth_brace(self, start: int, end: int, n: int) -> int | None:
        """The line of the n-th (0-based) `{` from line start, outside quoted strings."""
        seen = 0
        for number in range(start, min(end, self.total + 1)):
            text = self.lines[number - 1]
            quote: str | None = None
            i = 0
            while i < len(text):
                ch = text[i]
                if quote:
                    if ch == "\\" and quote == '"':
                        i += 1
                    elif ch == quote:
                        quote = None
                elif ch in "\"'":
                    quote = ch
                elif ch == "#":
                    break
                elif ch == "{":
                    if seen == n:
                        return number
                    seen += 1
                i += 1
        return None
