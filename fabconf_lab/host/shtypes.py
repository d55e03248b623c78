"""Values passed between the lab shell and its commands (kept apart so command modules need not import the shell)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabconf_lab.host.shell import Shell


class ShellExit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


# -- results ------------------------------------------------------------------------------------


@dataclass
class Result:
    out: str = ""
    err: str = ""
    status: int = 0


@dataclass
class Output:
    """What a shell run printed, in order, split by file descriptor (1 stdout, 2 stderr)."""

    chunks: list[tuple[int, str]] = field(default_factory=list)
    status: int = 0
    exited: bool = False  # the script ran `exit`

    def write(self, fd: int, text: str) -> None:
        if text:
            self.chunks.append((fd, text))

    @property
    def stdout(self) -> str:
        return "".join(t for fd, t in self.chunks if fd == 1)

    @property
    def stderr(self) -> str:
        return "".join(t for fd, t in self.chunks if fd == 2)

    @property
    def merged(self) -> str:
        return "".join(t for _fd, t in self.chunks)


@dataclass
class Invocation:
    argv: list[str]
    stdin: str
    root: bool
    shell: Shell


CommandFn = Callable[[Invocation], Result]
