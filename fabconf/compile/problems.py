"""Problems found in the input: where (file, path) and what, collected rather than raised one by one."""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fabconf.errors import FabconfError

PathPart = str | int


def format_path(path: Sequence[PathPart]) -> str:
    """``("roce", "pfc_priorities", 0)`` -> ``roce.pfc_priorities[0]``; an empty path is ``(root)``. A key
    with a character that does not print (a line break, a bidi override) or longer than SHOWN_MAX is shown by
    ``brief``: a problem stays one line, and shows what is really there."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            name = str(part)
            if not name.isprintable() or len(name) > SHOWN_MAX:
                name = brief(name)
            out += f".{name}" if out else name
    return out or "(root)"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 6, 6, 70, 70
_REPR.maxlong = 70
SHOWN_MAX = 80


def brief(value: Any) -> str:
    """``repr(value)`` for a problem message, at most SHOWN_MAX characters: a 10 MB string or a list of a
    million items is named by its start, never printed whole."""
    text = repr(value[: SHOWN_MAX + 1]) if isinstance(value, str) else _REPR.repr(value)
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 3] + "..."


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    path: str
    message: str
    severity: str = "error"  # "error" | "warning"

    def __str__(self) -> str:
        prefix = "" if self.severity == "error" else "warning: "
        return f"{self.file}: {self.path}: {prefix}{self.message}"


class Problems:
    """An ordered, de-duplicated collection of problems."""

    def __init__(self) -> None:
        self._items: dict[Problem, None] = {}

    def add(self, file: str, path: Sequence[PathPart] | str, message: str, severity: str = "error") -> None:
        text = path if isinstance(path, str) else format_path(path)
        self._items[Problem(file, text, message, severity)] = None

    def warn(self, file: str, path: Sequence[PathPart] | str, message: str) -> None:
        self.add(file, path, message, "warning")

    def extend(self, problems: Iterable[Problem]) -> None:
        for p in problems:
            self._items[p] = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self._items if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self._items if p.severity == "warning"]

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)


class InputError(FabconfError):
    """Raised at the boundary when the input has errors; carries every problem found."""

    def __init__(self, problems: Problems) -> None:
        super().__init__(f"{len(problems.errors)} error(s) in the inventory")
        self.problems = problems
