"""Pure NVUE tree work for the Cumulus driver: read a rendered document, plan a merge, diff, print.

A *tree* is the JSON object NVUE serves (``GET /nvue_v1/?rev=applied``): nested dicts whose leaves are
scalars; an empty dict is a present-but-empty node (``bridge domain br_default vlan 10`` is
``{"vlan": {"10": {}}}``). Nothing here does I/O.

Ownership (what ``load_merge_candidate`` may change; everything else on the switch is left alone):

==========================================  =================================================================
``system/hostname``                         the hostname leaf only
``interface/<name>``                        every interface the document names, whole; plus any ``vlanN``
                                            SVI the switch has and the document no longer has (removed)
``bridge/domain/br_default/vlan``           the VLAN set (a VLAN dropped from intent is removed)
``qos``                                     all of it
``router/bgp``                              global BGP
``vrf/default/router/bgp``                  BGP in the default VRF
==========================================  =================================================================

A document that carries anything outside these paths is refused: merge would silently not push it.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from fabconf.compile.yamlc import SAFE_DUMPER, SAFE_LOADER
from fabconf.platform.cumulus import fastread
from fabconf.platform.linux.fastyaml import block_dump, never_flow
from fabconf.platforms import platform

Tree = dict[str, Any]
Path = tuple[str, ...]

WILDCARD = "*"
# the owned paths live in the platform table ("a/*/c", "*" any key)
# owned paths, then the paths owned only when the document sets them (the gNMI server: never removed by a merge)
WHEN_SET: tuple[Path, ...] = tuple(tuple(p.split("/")) for p in platform("cumulus").owned_when_rendered)
OWNED: tuple[Path, ...] = tuple(tuple(p.split("/")) for p in platform("cumulus").owned) + WHEN_SET
SVI_NAME = re.compile(r"^vlan\d+$")
SECRET_KEYS = frozenset({"password", "hashed-password", "secret", "community", "key", "auth-key", "md5-key"})
REDACTED = "<removed>"


class DocumentError(ValueError):
    """The candidate document cannot be read or holds something the driver will not push."""


class _Missing:
    """Marks an absent node (``None`` is not used: it never appears in NVUE JSON, but be explicit)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


# -- reading the rendered document ------------------------------------------------------------------
class _NvueLoader(SAFE_LOADER):  # libyaml's parser when PyYAML has it: a 64-port spine's document on every diff
    """YAML with YAML 1.2 scalar rules: ``on``/``off``/``yes``/``no`` stay strings, ``65101:10`` stays a
    string (YAML 1.1 would read a sexagesimal 3906070), only plain decimal integers and floats are numbers.
    fabconf's templates quote every string anyway (reference §8); this guards hand-written documents."""


_DROPPED = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_NvueLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_NvueLoader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789"))
_NvueLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"),
    list("-+0123456789."),
)


def _clean(node: Any, where: str) -> Any:
    """Keys as strings, ``key:`` with no value as an empty node; refuse lists (NVUE trees have none)."""
    if node is None:
        return {}
    if isinstance(node, dict):
        return {str(k): _clean(v, f"{where}/{k}") for k, v in node.items()}
    if isinstance(node, list):
        raise DocumentError(f"{where or '/'}: a list is not part of an NVUE object tree")
    return node


def copy_tree(node: Any) -> Any:
    """A deep copy of a tree (dicts, lists and scalars: what NVUE JSON and YAML hold), without
    ``copy.deepcopy``'s memo and dispatch (which cost a third of a Cumulus spine's diff)."""
    if isinstance(node, dict):
        return {k: copy_tree(v) for k, v in node.items()}
    if isinstance(node, list):
        return [copy_tree(v) for v in node]
    return node


def merge_into(out: Tree, patch: Tree) -> None:
    """Deep merge (``set`` semantics) of ``patch`` into ``out``, in place; nothing of ``patch`` is shared."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            merge_into(out[key], value)
        else:
            out[key] = copy_tree(value)


def merge_trees(base: Tree, patch: Tree) -> Tree:
    """Deep merge (``set`` semantics) of ``patch`` into a copy of ``base``."""
    out = copy_tree(base)
    merge_into(out, patch)
    return out


def parse_document(text: str) -> Tree:
    """The tree of a rendered NVUE document.

    Accepted forms: the ``startup.yaml`` form fabconf renders (a list of ``- set: {tree}`` items, with an
    optional ``- header: …`` item that is ignored), or a bare tree (``nv config show -o json``).
    ``- unset:`` items are refused: a full document states what is, not what to remove.
    """
    data: Any = fastread.read(text)  # what the loader below reads, without PyYAML, for what fabconf renders
    if data is None:
        try:
            data = yaml.load(text, Loader=_NvueLoader)  # a SafeLoader subclass
        except yaml.YAMLError as exc:
            raise DocumentError(f"the document is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if isinstance(data, dict):
        return _clean(data, "")
    if not isinstance(data, list):
        raise DocumentError("the document must be a list of '- set:' items or an NVUE object tree")
    tree: Tree = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not set(item) <= {"set", "header"}:
            keys = sorted(item) if isinstance(item, dict) else type(item).__name__
            raise DocumentError(f"item {i + 1}: expected 'set' (or 'header'), got {keys}")
        if "set" in item:
            part = _clean(item["set"], "")
            if not isinstance(part, dict):
                raise DocumentError(f"item {i + 1}: 'set' must hold an object tree")
            tree = merge_trees(tree, part) if tree else part  # _clean built part afresh: nothing shared
    return tree


# -- comparing ----------------------------------------------------------------------------------------
def canonical(value: Any) -> Any:
    """A form in which equal configuration compares equal: keys and scalars as text.

    [U] a real switch may answer ``"9216"`` where the document says ``9216`` (or the reverse); NVUE
    values are typed by the schema, so comparing text is safe for every leaf fabconf renders.
    """
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is MISSING:
        return value
    return str(value)


def same(a: Any, b: Any) -> bool:
    """``canonical(a) == canonical(b)``, without building either where both are dicts with the same text keys
    (every level of a tree compared with its staged or running self: issue 42)."""
    if a is b:
        return True
    if (
        isinstance(a, dict)
        and isinstance(b, dict)
        and len(a) == len(b)
        and all(type(k) is str for k in a)
        and a.keys() == b.keys()
    ):
        return all(same(value, b[key]) for key, value in a.items())
    return bool(canonical(a) == canonical(b))


def get_at(tree: Any, path: Iterable[str]) -> Any:
    node = tree
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def wrap(path: Path, value: Any) -> Any:
    for part in reversed(path):
        value = {part: value}
    return value


# -- ownership and the merge plan ------------------------------------------------------------------------
def _matches(pattern: Path, path: Path) -> bool:
    return len(pattern) == len(path) and all(p in (WILDCARD, q) for p, q in zip(pattern, path, strict=True))


def _is_prefix(path: Path) -> bool:
    return any(
        len(path) < len(pattern) and all(p in (WILDCARD, q) for p, q in zip(pattern, path, strict=False))
        for pattern in OWNED
    )


def unowned_paths(doc: Tree) -> list[str]:
    """Paths in ``doc`` that no OWNED entry covers (as ``a/b/c``), sorted."""
    out: list[str] = []

    def walk(node: Any, path: Path) -> None:
        if any(_matches(pattern, path) for pattern in OWNED):
            return
        if not _is_prefix(path):
            out.append("/".join(path))
            return
        if not isinstance(node, dict):
            out.append("/".join(path))
            return
        for key, child in node.items():
            walk(child, (*path, key))

    for key, child in doc.items():
        walk(child, (key,))
    return sorted(out, key=natural_key)


def owned_paths(doc: Tree, applied: Tree) -> list[Path]:
    """The concrete owned paths for a merge of ``doc`` onto ``applied``, in OWNED order."""
    out: list[Path] = []
    for pattern in OWNED:
        if pattern == ("interface", WILDCARD):
            names = list(get_at(doc, ["interface"]) or {}) if isinstance(doc.get("interface"), dict) else []
            have: dict[str, Any] = applied["interface"] if isinstance(applied.get("interface"), dict) else {}
            stale = [n for n in have if SVI_NAME.match(n) and n not in names]
            out.extend(("interface", n) for n in sorted([*names, *stale], key=natural_key))
        elif pattern not in WHEN_SET or get_at(doc, list(pattern)) is not MISSING:
            out.append(pattern)
    return out


@dataclass(frozen=True)
class MergePlan:
    """What to send: DELETE each of ``deletes``, then one root PATCH of ``patch`` (set only)."""

    deletes: tuple[Path, ...]
    patch: Tree
    changed: tuple[Path, ...]

    @property
    def empty(self) -> bool:
        return not self.changed


def keep_used_vlans(doc: Tree, applied: Tree) -> Tree:
    """``doc`` whose ``br_default`` VLAN set also keeps the VLANs that interfaces the document does not name
    (so fabconf does not own them) use as their access VLAN on the switch.

    Removing such a VLAN would leave that port's access VLAN outside the bridge, which NVUE refuses on apply
    (issue 29's corpus; [U] the device's exact rule), and fabconf may not change the port itself. The VLAN stays
    until the port is reconfigured or cleared.
    """
    found = get_at(doc, ["bridge", "domain", "br_default", "vlan"])
    want: dict[str, Any] = found if isinstance(found, dict) else {}  # a document without VLANs removes them all
    named = set(doc.get("interface") or {})
    have_ifs = applied.get("interface") if isinstance(applied.get("interface"), dict) else {}
    keep: list[str] = []
    for name, iface in (have_ifs or {}).items():
        if name in named or not isinstance(iface, dict):
            continue
        domain = get_at(iface, ["bridge", "domain", "br_default"])
        access = domain.get("access") if isinstance(domain, dict) else None
        if access is not None and str(access) not in want and str(access) not in keep:
            keep.append(str(access))
    if not keep:
        return doc
    out: Tree = copy_tree(doc)
    merge_into(out, wrap(("bridge", "domain", "br_default", "vlan"), {vlan: {} for vlan in keep}))
    return out


def merge_plan(doc: Tree, applied: Tree) -> MergePlan:
    """For every owned path whose applied subtree differs from the document: unset it (when it exists
    and is not a plain leaf being overwritten by another leaf), then set the desired subtree.

    A single NVUE PATCH may not both set and unset (reference §1.5), hence DELETEs first, then PATCH.
    """
    deletes: list[Path] = []
    changed: list[Path] = []
    patch: Tree = {}
    for path in owned_paths(doc, applied):
        want, have = get_at(doc, path), get_at(applied, path)
        if same(want, have):
            continue
        changed.append(path)
        leaf_over_leaf = not isinstance(want, dict) and not isinstance(have, dict) and want is not MISSING
        if have is not MISSING and not leaf_over_leaf:
            deletes.append(path)
        if want is not MISSING:
            merge_into(patch, wrap(path, want))
    return MergePlan(tuple(deletes), patch, tuple(changed))


def staged_problems(doc: Tree, applied: Tree, staged: Tree, plan: MergePlan) -> list[str]:
    """Check a staged merge revision: every owned path equals the document, nothing else moved."""
    problems: list[str] = []
    paths = owned_paths(doc, applied)
    for path in paths:
        if not same(get_at(staged, path), get_at(doc, path)):
            problems.append(f"{'/'.join(path)} differs from the document after staging")
    for path in changed_paths(applied, staged):
        if not any(path[: len(p)] == p for p in paths):
            problems.append(f"{'/'.join(path)} changed although fabconf does not own it")
    return problems


# -- diff -------------------------------------------------------------------------------------------------
_DIGITS = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=1 << 16)
def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """``swp2`` before ``swp10``; ties broken by the text itself so the order is total. Computed once per text
    and process (the same interface, VRF and leaf names are sorted again and again: a tenth of a Cumulus switch's
    diff, issue 42); a tuple, so that the cached key cannot be changed by whoever sorts with it."""
    return tuple((0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in _DIGITS.split(text) if tok)


def _word(text: str) -> str:
    return shlex.quote(text)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return _word(str(value))


def set_lines(node: Any, path: Path, verb: str = "nv set") -> Iterator[str]:
    """``nv set`` commands for a subtree: one per leaf and per empty node."""
    if isinstance(node, dict):
        if not node:
            yield " ".join([verb, *map(_word, path)])
        for key, child in node.items():
            yield from set_lines(child, (*path, key), verb)
        return
    yield " ".join([verb, *map(_word, path), _scalar(node)])


def _unset_line(path: Path) -> str:
    return " ".join(["nv unset", *map(_word, path)])


def _diff(a: Any, b: Any, path: Path, unsets: list[str], sets: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b:
                unsets.append(_unset_line((*path, key)))
        for key, child in b.items():
            if key in a:
                _diff(a[key], child, (*path, key), unsets, sets)
            else:
                sets.extend(set_lines(child, (*path, key)))
        return
    if same(a, b) or not path:
        return
    if isinstance(a, dict) or isinstance(b, dict):  # a leaf became a subtree or the reverse
        unsets.append(_unset_line(path))
    sets.extend(set_lines(b, path))


def diff_lines(before: Tree, after: Tree) -> list[str]:
    """What turns ``before`` into ``after`` as ``nv unset`` lines then ``nv set`` lines, each sorted.

    An unset names the highest node that disappears; a set names every new or changed leaf.
    """
    unsets: list[str] = []
    sets: list[str] = []
    _diff(before, after, (), unsets, sets)
    return sorted(unsets, key=natural_key) + sorted(sets, key=natural_key)


def changed_paths(before: Tree, after: Tree) -> list[Path]:
    """The deepest paths that differ: leaves, empty nodes, and nodes whose type changed."""
    out: list[Path] = []

    def walk(a: Any, b: Any, path: Path) -> None:
        if same(a, b):
            return
        both = isinstance(a, dict) and isinstance(b, dict)
        if both or (a is MISSING and isinstance(b, dict) and b) or (b is MISSING and isinstance(a, dict) and a):
            a, b = a if isinstance(a, dict) else {}, b if isinstance(b, dict) else {}
            for key in sorted(a.keys() | b.keys(), key=natural_key):
                walk(a.get(key, MISSING), b.get(key, MISSING), (*path, key))
        else:
            out.append(path)

    walk(before, after, ())
    return out


# -- printing ----------------------------------------------------------------------------------------------
def sort_tree(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: sort_tree(node[k]) for k in sorted(node, key=natural_key)}
    return node


def sanitize(node: Any) -> Any:
    """The tree with secret leaves (passwords, keys, SNMP communities) replaced by ``<removed>``."""
    if isinstance(node, dict):
        return {k: (REDACTED if k in SECRET_KEYS and not isinstance(v, dict) else sanitize(v)) for k, v in node.items()}
    return node


def tree_yaml(tree: Tree) -> str:
    """The ``- set: {tree}`` form (as fabconf renders and ``/etc/nvue.d/startup.yaml`` holds), keys in
    natural order; PyYAML quotes strings such as ``'on'`` that YAML 1.1 would read back as other types."""
    if not tree:
        return ""
    # the layout without PyYAML's emitter where that is exact (each distinct scalar and key still as _dump writes
    # it); anything else, or a line that could be folded, is _dump's own (issue 42: a fifth of a switch's diff)
    return block_dump([{"set": sort_tree(tree)}], _dump, flow=never_flow, width=60)


def _dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=SAFE_DUMPER, sort_keys=False, default_flow_style=False)
