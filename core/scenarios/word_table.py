"""What every word table is: a name the code uses mapped to its (en, zh), and the one lookup
of them all (the glossary's, the file mistakes', the transcript's, the app's)."""

from collections.abc import Mapping

Word = tuple[str, str]  # (en, zh)


def pick(word: Word, lang: str) -> str:
    """One (en, zh) pair in `lang` ("zh" or anything else for English)."""
    return word[1] if lang == "zh" else word[0]


def lookup(table: Mapping[str, Word], name: str, lang: str, /, **fmt: object) -> str:
    """The one lookup of every word table (this module's, the transcript's, the app's):
    `name` in `lang`, its `{fields}` filled from `fmt`; a name the table does not have is
    shown as itself (a word the code writes before any table knows it)."""
    word = table.get(name)
    if word is None:
        return name
    text = pick(word, lang)
    return text.format(**fmt) if fmt else text
