"""Load the inventory directory: Nornir SimpleInventory files plus the fabric intent and the cabling.

Only reading happens here. Every file is read within the limits of ``fabconf.compile.limits`` (size, nesting,
values after alias expansion: checked before any object is built), parsed with PyYAML's C loader when
available, duplicate keys are reported (PyYAML would silently keep the last one), and every failure becomes
a Problem with the file, line and column rather than an exception.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from dataclasses import dataclass, field
from functools import cache as cache_fn
from pathlib import Path
from typing import Any

import yaml

from fabconf.compile import cache, limits
from fabconf.compile.limits import LimitExceeded
from fabconf.compile.problems import Problem, Problems, brief
from fabconf.compile.yamlc import SAFE_LOADER

FILES = {
    "hosts": ("hosts.yaml", True),
    "groups": ("groups.yaml", False),
    "defaults": ("defaults.yaml", False),
    "fabric": ("fabric.yaml", True),
    "cabling": ("cabling.yaml", True),
}


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int, column: int) -> None:
        super().__init__(key)
        self.key, self.line, self.column = key, line, column


class _Loader(SAFE_LOADER):
    """Safe loader that refuses duplicate mapping keys and says where a value cannot be read."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue  # `<<: *defaults`: merged keys may be overridden, that is the point of a merge
            key = self.construct_object(key_node, deep=deep)
            try:
                hashable = key in seen
            except TypeError:
                continue
            if hashable:
                mark = key_node.start_mark
                raise _DuplicateKey(key, mark.line + 1, mark.column + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _readable(construct: Any) -> Any:
    """A scalar constructor whose ValueError (a date that does not exist, 2024-13-45; an integer of more than
    4300 digits) becomes a YAML error with the value's place."""

    def wrapped(loader: Any, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as exc:
            message = f"cannot read the value {brief(node.value)}: {str(exc).split(';')[0]}"
            raise yaml.constructor.ConstructorError(None, None, message, node.start_mark) from exc

    return wrapped


for _tag, _construct in (
    ("tag:yaml.org,2002:int", yaml.constructor.SafeConstructor.construct_yaml_int),
    ("tag:yaml.org,2002:float", yaml.constructor.SafeConstructor.construct_yaml_float),
    ("tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_yaml_timestamp),
):
    _Loader.add_constructor(_tag, _readable(_construct))
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Loader.construct_mapping)
_MERGE = "tag:yaml.org,2002:merge"
# Characters YAML 1.1 does not allow in a stream (its printable set): found before the parser, with a place.
_NOT_YAML = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def display_name(path: Path) -> str:
    """A path as the user should read it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


@dataclass
class RawInventory:
    """The parsed files, untouched. ``files`` maps a kind (``hosts``…) to its display name."""

    directory: Path
    files: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # kind -> SHA-256 of the bytes read (fabconf.compile.cache)
    # kind -> [(top-level key, SHA-256 of its entry's text)] of a file read entry by entry (``Entries``)
    entries: dict[str, list[tuple[Any, str]]] = field(default_factory=dict)

    @property
    def hosts(self) -> dict[str, Any]:
        return self.data.get("hosts") or {}

    @property
    def groups(self) -> dict[str, Any]:
        return self.data.get("groups") or {}

    @property
    def defaults(self) -> dict[str, Any]:
        return self.data.get("defaults") or {}

    @property
    def fabric(self) -> dict[str, Any]:
        return self.data.get("fabric") or {}

    @property
    def cabling(self) -> dict[str, Any]:
        return self.data.get("cabling") or {}


def _read(path: Path) -> bytes:
    """The file's bytes, refusing what is not a regular file (a FIFO would block, /dev/zero never end) or is
    larger than MAX_FILE_BYTES before reading it."""
    too_large = f"larger than {limits.MAX_FILE_BYTES // 2**20} MiB, the limit for one inventory file"
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise LimitExceeded(0, 0, "not a regular file")
    if info.st_size > limits.MAX_FILE_BYTES:
        raise LimitExceeded(0, 0, too_large)
    with path.open("rb") as stream:
        data = stream.read(limits.MAX_FILE_BYTES + 1)  # the file may have grown since
    if len(data) > limits.MAX_FILE_BYTES:
        raise LimitExceeded(0, 0, too_large)
    return data


def _place(text: str, index: int) -> tuple[int, int]:
    """(line, column), counting from 1, of position ``index`` of ``text``."""
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")  # valid up to there
        line, column = _place(before, len(before))
        raise LimitExceeded(
            line, column, f"not UTF-8 text (byte 0x{data[exc.start]:02x}): save the file as UTF-8"
        ) from None
    if hit := _NOT_YAML.search(text):
        line, column = _place(text, hit.start())
        raise LimitExceeded(
            line, column, f"the character U+{ord(hit.group()):04X} is not allowed in YAML (is this a text file?)"
        )
    return text


def _syntax_message(exc: yaml.MarkedYAMLError, text: str, line: int, column: int) -> str:
    lines = text.split("\n")
    if 0 < line <= len(lines) and "\t" in lines[line - 1][: column + 1]:
        return "a tab character: YAML indents with spaces, never tabs"
    if "another document" in str(exc.problem):
        return "a second YAML document ('---'): an inventory file holds exactly one"
    if "maximum nesting depth" in str(exc.problem):  # libyaml's own limit (1000), far above ours
        return f"too deeply nested (more than {limits.MAX_DEPTH} levels)"
    if str(exc.problem).startswith("cannot read the value"):
        return str(exc.problem)
    if "could not determine a constructor for the tag" in str(exc.problem):
        tag = str(exc.problem).rsplit(" ", 1)[-1]
        return f"the tag {tag} is not allowed: an inventory holds plain YAML (text, numbers, lists, mappings)"
    return f"YAML syntax error: {' '.join(str(exc.problem or exc.context).split())}"


def load_yaml(path: Path, shown: str, problems: Problems) -> tuple[bool, Any]:
    """Parse one YAML file within the limits of fabconf.compile.limits; on failure record a problem and return
    (False, None). Nothing is constructed from a file that breaks a limit."""
    ok, value, _digest, _entries = load_yaml_digest(path, shown, problems)
    return ok, value


def load_yaml_digest(
    path: Path, shown: str, problems: Problems
) -> tuple[bool, Any, str | None, list[tuple[Any, str]] | None]:
    """``load_yaml``, the SHA-256 of the bytes read (None when none were) and, for a large file read entry by entry
    (``Entries``), its [(key, entry digest)]. The same bytes parsed before come from ``fabconf.compile.cache``."""
    text = ""
    try:
        data = _read(path)
        key = cache.digest(data)
        value = cache.get("yaml", key)
        if value is not cache.MISS:
            return True, value, key, None
        text = _decode(data)
        entries = Entries.read(text, path) if len(data) >= Entries.MIN_BYTES else None
        if entries is None:
            limits.check_events(text, SAFE_LOADER)
            value = yaml.load(text, Loader=_Loader)
        else:
            value = entries.value
        cache.put("yaml", key, value)
        return True, value, key, None if entries is None else entries.digests
    except FileNotFoundError:
        problems.add(shown, "(file)", "file not found")
    except LimitExceeded as exc:
        problems.add(shown, exc.where, exc.message)
    except OSError as exc:
        problems.add(shown, "(file)", f"cannot read: {exc.strerror or exc}")
    except _DuplicateKey as exc:
        problems.add(shown, f"line {exc.line} column {exc.column}", f"duplicate key {exc.key!r}")
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if mark is None:
            problems.add(shown, "(file)", _syntax_message(exc, text, 0, 0))
        else:
            where = f"line {mark.line + 1} column {mark.column + 1}"
            problems.add(shown, where, _syntax_message(exc, text, mark.line + 1, mark.column))
    except yaml.YAMLError as exc:
        problems.add(shown, "(file)", f"YAML error: {' '.join(str(exc).split())}")
    except RecursionError:  # the limits keep nesting far below this; a last line of defence
        problems.add(shown, "(file)", f"too deeply nested (more than {limits.MAX_DEPTH} levels)")
    return False, None, None, None


class _NotEntries(Exception):
    """The file is not plainly a mapping of named entries: it is read as a whole."""


# a line that starts at column 0 (not blank, not a comment) ...
_TOP_LINE = re.compile(r"^[^\s#]", re.M)
# ... must start an entry: a plain name and a colon (no quotes, no anchors, no "?", "-", "---", "%" or "...")
_ENTRY_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*:(?=[ \t\r\n]|\Z)")


@dataclass
class Entries:
    """A large file that is a block mapping of named entries (``hosts.yaml``: one per device) read entry by entry,
    each entry's parse kept in ``fabconf.compile.cache`` under the SHA-256 of its text: editing one device of a
    5,600-device ``hosts.yaml`` parses that device's lines again, not the file.

    The text is cut before every line that starts at column 0 with a plain name and a colon; any other line at
    column 0 (a quoted or complex key, a document marker, a directive), an anchor anywhere (an alias could reach
    across entries), an entry that is not exactly one key, a key seen twice, or any error while reading an entry
    sends the file to the whole-file reader, which reports what is wrong with its line as always. Every entry is
    held to the limits of ``fabconf.compile.limits`` on its own, and their values add up against ``MAX_NODES``.
    """

    MIN_BYTES = 64 * 1024  # smaller files are read whole: cutting them saves nothing
    value: dict[Any, Any]
    digests: list[tuple[Any, str]]

    @classmethod
    def read(cls, text: str, path: Path) -> Entries | None:
        if "&" in text or _likely_too_many_values(text):
            return None
        starts = []
        for hit in _TOP_LINE.finditer(text):
            if not _ENTRY_KEY.match(text, hit.start()):
                return None
            starts.append(hit.start())
        if len(starts) < 2:
            return None
        starts[0] = 0  # comments and blank lines before the first entry belong to it
        store = cache.EntryStore("yaml-entries", str(path.resolve()))
        value: dict[Any, Any] = {}
        digests: list[tuple[Any, str]] = []
        nodes = 1
        try:
            for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
                part = text[start:end]
                digest = cache.digest(part.encode())
                entry = store.get(digest)
                if entry is cache.MISS:
                    entry = _read_entry(part)
                key, item, count = entry
                if key in value:
                    return None
                value[key] = item
                digests.append((key, digest))
                store.keep(digest, entry)
                nodes += count - 1  # each entry counted its own enclosing mapping
                if nodes > limits.MAX_NODES:
                    return None  # the whole-file reader says where, in one pass
        except (_NotEntries, LimitExceeded, _DuplicateKey, yaml.YAMLError, RecursionError):
            return None
        if nodes > limits.MAX_NODES:
            return None
        store.save()
        return cls(value, digests)


def _likely_too_many_values(text: str) -> bool:
    """A cheap look (no parsing) at whether a file may be near ``MAX_NODES``: every ``key: value`` is at least two
    values. Such a file goes to the whole-file reader, whose single pass of the C parser over the events refuses it
    where the limit is passed (about 4 s for 15 MB), instead of parsing entry after entry first (200,000 entries
    took 25 s). It only picks the reader; the count itself is always exact."""
    return 2 * (text.count(": ") + text.count(":\n")) > limits.MAX_NODES // 2


def _read_entry(part: str) -> list[Any]:
    """[key, value, values counted] of one entry's text."""
    count = limits.check_events(part, SAFE_LOADER)
    doc = yaml.load(part, Loader=_Loader)
    if not isinstance(doc, dict) or len(doc) != 1:
        raise _NotEntries
    ((key, item),) = doc.items()
    return [key, item, count]


def load(directory: Path | str, problems: Problems) -> RawInventory:
    """Read every inventory file of ``directory``; what cannot be read is recorded in ``problems``."""
    directory = Path(directory)
    raw = RawInventory(directory)
    if not directory.is_dir():
        problems.add(display_name(directory), "(directory)", "inventory directory not found")
        return raw
    todo: list[tuple[str, Path, str]] = []
    for kind, (name, required) in FILES.items():
        path = directory / name
        shown = display_name(path)
        raw.files[kind] = shown
        if not path.exists() and not required:
            raw.data[kind] = {}
            continue
        todo.append((kind, path, shown))
    for (kind, _path, _shown), (ok, value, digest, entries, found) in zip(todo, _read_files(todo), strict=True):
        problems.extend(found)
        if ok and digest is not None:
            raw.data[kind] = {} if value is None else value
            raw.digests[kind] = digest
            if entries is not None:
                raw.entries[kind] = entries
    return raw


PARALLEL_BYTES = 1 << 20  # files to parse (not in the cache) from this size on are parsed on every core (issue 42)
_Read = tuple[bool, Any, str | None, list[tuple[Any, str]] | None, list[Problem]]


def _read_one(item: tuple[str, Path, str]) -> _Read:
    _kind, path, shown = item
    found = Problems()
    ok, value, digest, entries = load_yaml_digest(path, shown, found)
    return ok, value, digest, entries, list(found)


def _to_parse(path: Path) -> int:
    """The bytes of ``path`` that a read would parse: none when the compile cache holds its parse (or when it is
    not a plain file of at most MAX_FILE_BYTES: its read only says so)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > limits.MAX_FILE_BYTES:
            return 0
        if cache.directory() is None:
            return info.st_size
        data = path.read_bytes()
    except OSError:
        return 0
    return 0 if cache.has("yaml", cache.digest(data)) else len(data)


# Parsing by entries costs about 2.7 times as much a byte as a sequence of one-line items (hosts.yaml 0.33 s for
# 463 KB, cabling.yaml 0.79 s for 3 MB, bench/README.md): the weight that deals a large run's work evenly.
_ENTRIES_WEIGHT = 2.7


def _read_files(todo: list[tuple[str, Path, str]]) -> list[_Read]:
    """``_read_one`` of every file, in ``todo``'s order. When PARALLEL_BYTES or more are to be parsed (a cold
    compile of a large fabric: 3 MB of ``cabling.yaml``, 0.5 MB of ``hosts.yaml``), the files are parsed in forked
    workers, a large list of links cut into ``Parts``, the work dealt so that each core gets as much; the results
    are the same either way."""
    sizes = [_to_parse(path) for _kind, path, _shown in todo]
    # forking a process that runs other threads (a library's pool, a deploy's workers) may copy a lock held
    if sum(sizes) < PARALLEL_BYTES or threading.active_count() > 1:
        return [_read_one(item) for item in todo]
    from fabconf.compile.parallel import fork_map

    cut = {i: Parts.cut(todo[i][1]) for i, size in enumerate(sizes) if size >= Parts.MIN_BYTES}
    jobs: list[tuple[int, tuple[str, int, str] | None]] = []  # (file index, a part (``Parts``), None: the whole file)
    costs: list[float] = []
    for i, size in enumerate(sizes):
        parts = cut.get(i)
        if parts is None:
            jobs.append((i, None))
            costs.append(size * (_ENTRIES_WEIGHT if size >= Entries.MIN_BYTES else 1))
        else:
            jobs.extend((i, part) for part in parts.texts)
            costs.extend(len(part[0]) for part in parts.texts)

    def job(item: tuple[int, tuple[str, int, str] | None]) -> Any:
        i, part = item
        return _read_one(todo[i]) if part is None else Parts.parse(part)

    results: dict[int, list[Any]] = {i: [] for i in range(len(todo))}  # file index -> its result, or its parts'
    for (i, _part), result in zip(jobs, fork_map(job, jobs, threshold=2, costs=costs), strict=True):
        results[i].append(result)
    out: list[_Read] = []
    for i, item in enumerate(todo):
        parts = cut.get(i)
        if parts is None:
            out.append(results[i][0])
            continue
        value = parts.join(results[i])
        if value is None:  # not plainly a list of links after all: read whole, each problem with its line
            out.append(_read_one(item))
            continue
        cache.put("yaml", parts.digest, value)
        out.append((True, value, parts.digest, None, []))
    return out


# the one line at column 0 of a file ``Parts`` cuts: a plain key and nothing else
_SEQUENCE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*:[ \t]*\r?\n")
# the first line that is neither blank nor a comment, and its indent
_FIRST_LINE = re.compile(r"^(?![ \t]*(?:#|\r?$))( *)", re.M)


@cache_fn
def _other_line(indent: str) -> re.Pattern[str]:
    """A line that is neither blank, a comment, nor ``indent`` followed by ``- `` (one item of the list)."""
    return re.compile(rf"^(?!{indent}- )(?![ \t]*(?:#|\r?$))", re.M)


@dataclass
class Parts:
    """A large file that is one key holding a list of one-line items (``cabling.yaml``: ``links:`` then one
    ``- [A:PORT, B:PORT]`` a line), cut into parts that forked workers parse at once (issue 42); ``join`` puts the
    parts' values back together: the value a whole read gives.

    Each part is read as the key's line followed by its own items, so that it nests exactly as deep as in the
    file. Anything else at column 0 (a second key, a document marker, a directive), an item line at another indent
    or not starting ``- ``, an anchor anywhere, or any error or limit met while reading a part sends the file to the
    whole-file reader, which reports what is wrong with its line as always."""

    MIN_BYTES = 1 << 20  # smaller files are read whole
    PART_BYTES = 512 * 1024
    texts: list[tuple[str, int, str]]  # (the key's line and a part's items, where the items start, their indent)
    digest: str

    @classmethod
    def cut(cls, path: Path) -> Parts | None:
        """The file's parts, or None when it is not plainly one key and its list (the parts' own lines are looked
        at by ``parse``, in the workers)."""
        try:
            data = _read(path)
            text = data.decode("utf-8")
        except (OSError, LimitExceeded, UnicodeDecodeError):
            return None  # the whole-file reader says why
        if "&" in text or _likely_too_many_values(text):
            return None
        top = _TOP_LINE.search(text)
        head = _SEQUENCE_KEY.match(text, top.start()) if top else None
        first = _FIRST_LINE.search(text, head.end()) if head else None
        if head is None or first is None:
            return None
        indent = first.group(1)
        item = "\n" + indent + "- "
        count = max(2, -(-len(data) // cls.PART_BYTES))
        starts = [first.start()]
        for k in range(1, count):
            at = text.find(item, max(starts[-1] + 1, len(text) * k // count))
            if at < 0:
                break
            starts.append(at + 1)
        if len(starts) < 2:
            return None
        parts = [text[: head.end()] + text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
        return cls([(part, head.end(), indent) for part in parts], cache.digest(data))

    @staticmethod
    def parse(part: tuple[str, int, str]) -> tuple[int, Any] | None:
        """(values counted, the part's value), or None when the part is not plainly the key's line and items of
        one line each at ``indent``, or cannot be read within the limits."""
        text, body, indent = part
        if _NOT_YAML.search(text) or _other_line(indent).search(text, body):
            return None
        try:
            count = limits.check_events(text, SAFE_LOADER)
            return count, yaml.load(text, Loader=_Loader)
        except (LimitExceeded, _DuplicateKey, yaml.YAMLError, RecursionError):
            return None

    @staticmethod
    def join(parsed: list[tuple[int, Any] | None]) -> dict[Any, Any] | None:
        """The file's value from its parts' (None when a part was not plainly read, or the values add up to more
        than ``MAX_NODES``: each part counted its own key and list)."""
        if any(p is None for p in parsed):
            return None
        counts = [p[0] for p in parsed if p is not None]
        values = [p[1] for p in parsed if p is not None]
        if sum(counts) > limits.MAX_NODES or not all(isinstance(v, dict) and len(v) == 1 for v in values):
            return None
        (key,) = values[0]
        if not all(isinstance(v.get(key), list) for v in values):
            return None
        return {key: [item for v in values for item in v[key]]}
