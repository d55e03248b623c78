"""Config injection, field by platform (issue 16): every inventory string that reaches a device, on every
platform it reaches, with a line break, each shell metacharacter and an embedded command.

Two layers, data-driven:

- **validation** (``FIELDS`` x ``PAYLOADS``): the value, set where an inventory author would write it for a
  device of that platform, is refused with a problem naming its file and path; or (``ACCEPTED``, free text
  that no template renders) it validates and the rendered configuration of every device is unchanged.
- **past validation** (device data straight into the renderer and, for GPU hosts, the command planner):
  a value or key with a shell payload renders; every command run on the host keeps the same shell operators
  (``;``, ``|``, ``&&``, ``>``, ``$(`` ...) as the clean plan, the payload only inside one quoted word.
  (Line breaks past validation are ``tests/test_injection.py``; a push to a lab host is
  ``tests/e2e/test_injection_lab.py``.)
"""

from __future__ import annotations

import copy
import shlex
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pristine import EXAMPLE

from fabconf.compile import schema
from fabconf.compile.inventory import FILES, RawInventory
from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.problems import InputError, Problems, brief, format_path
from fabconf.compile.render import UnsafeValueError, render
from fabconf.platform.linux.plan import desired_target, plan
from fabconf.platform.linux.state import HostObserved, NicObserved, load_document

ROOT = Path(__file__).resolve().parents[3]
INVENTORY = EXAMPLE
DOCS = {kind: yaml.safe_load((INVENTORY / name).read_text()) or {} for kind, (name, _) in FILES.items()}
KIND = {name: kind for kind, (name, _) in FILES.items()}

PLATFORMS = ("cumulus", "eos", "nxos", "linux")
DEVICE = {"cumulus": "leaf1", "eos": "leaf3", "nxos": "leaf4", "linux": "gpu01"}
GROUP = {"cumulus": "sn5600", "eos": "dcs-7060x5", "nxos": "n9k-9364d", "linux": "gpu_hosts"}

PAYLOADS = {
    # a line break or another character that ends a line
    "newline": "\nusername evil privilege 15 secret evilpass",
    "carriage return": "\r\nhostname evil",
    "NUL": "\x00reboot",
    "line separator": "\u2028reboot",
    # shell metacharacters
    "semicolon": ";reboot",
    "pipe": "|reboot",
    "and": "&&reboot",
    "redirect": ">/etc/passwd",
    "single quote": "'x",
    "double quote": '"x',
    "backslash": "\\x",
    "comment": "#x",
    "glob": "*",
    "bang": "!x",
    "braces": "{a,b}",
    # YAML indicators (NVUE's candidate is YAML): a key of its own, a comment that cuts the value
    "YAML mapping": ": {evil: 1}",
    "YAML comment": " #x",
    # an embedded command
    "space and a word": " reboot",
    "command substitution": "$(reboot)",
    "backticks": "`reboot`",
    "variable": "${IFS}reboot",
}
LINE_BREAKS = ("newline", "carriage return", "NUL", "line separator")


# ---- where each field is written, per platform ----------------------------------------------------------------
# ("set", FILE, PATH, CLEAN): the value at PATH becomes CLEAN + payload
# ("rename", FILE, PATH, KEY): the key KEY of the mapping at PATH becomes KEY + payload
# ("add", FILE, PATH, KEY, VALUE): the mapping at PATH gains KEY + payload: VALUE
Edit = tuple[Any, ...]


def _cable(device: str) -> Edit:
    for i, link in enumerate(DOCS["cabling"]["links"]):
        for j, end in enumerate(link):
            if end.startswith(device + ":"):
                return ("set", "cabling.yaml", ["links", i, j], end)
    raise AssertionError(device)


def _switches(edit: Callable[[str], Edit]) -> dict[str, Edit]:
    return {p: edit(p) for p in ("cumulus", "eos", "nxos")}


def _all(edit: Callable[[str], Edit]) -> dict[str, Edit]:
    return {p: edit(p) for p in PLATFORMS}


FIELDS: dict[str, dict[str, Edit]] = {
    "device name": _all(lambda p: ("rename", "hosts.yaml", [], DEVICE[p])),
    "management address": _all(lambda p: ("set", "hosts.yaml", [DEVICE[p], "hostname"], "192.0.2.99")),
    "description": _all(lambda p: ("set", "hosts.yaml", [DEVICE[p], "data", "description"], "rack 4")),
    "tag": _all(lambda p: ("set", "hosts.yaml", [DEVICE[p], "data", "tags", 0], "row4")),
    "rack": _all(lambda p: ("set", "hosts.yaml", [DEVICE[p], "data", "rack"], "r4")),
    "group name": _all(lambda p: ("rename", "groups.yaml", [], GROUP[p])),
    "model": _switches(lambda p: ("set", "groups.yaml", [GROUP[p], "data", "model"], "SN5600")),
    "os_version": _switches(lambda p: ("set", "hosts.yaml", [DEVICE[p], "data", "os_version"], "5.12")),
    "port range": _switches(lambda p: ("set", "groups.yaml", [GROUP[p], "data", "ports", 0], "swp{1-64}")),
    "cabled port": _all(lambda p: _cable(DEVICE[p])),
    "VLAN name": _all(lambda p: ("set", "fabric.yaml", ["vlans", 0, "name"], "TRAIN_RAIL0")),
    "fabric name": _all(lambda p: ("set", "fabric.yaml", ["name"], "pod1")),
    "NIC netdev": {"linux": ("set", "groups.yaml", ["gpu_hosts", "data", "nics", 0, "netdev"], "ens1f0np0")},
    "NIC rdma": {"linux": ("set", "groups.yaml", ["gpu_hosts", "data", "nics", 0, "rdma"], "mlx5_0")},
    "NIC pci": {"linux": ("set", "groups.yaml", ["gpu_hosts", "data", "nics", 0, "pci"], "0000:17:00.0")},
    "NIC adapter": {"linux": ("set", "groups.yaml", ["gpu_hosts", "data", "nics", 0, "adapter"], "card0")},
    "NCCL key": {"linux": ("add", "fabric.yaml", ["hosts", "nccl"], "NCCL_DEBUG", "INFO")},
    "NCCL value": {"linux": ("set", "fabric.yaml", ["hosts", "nccl", "NCCL_DEBUG"], "INFO")},
    "mlxconfig key": {"linux": ("add", "fabric.yaml", ["hosts", "mlxconfig"], "LINK_TYPE_P2", "ETH(2)")},
    "mlxconfig value": {"linux": ("set", "fabric.yaml", ["hosts", "mlxconfig", "LINK_TYPE_P1"], "ETH(2)")},
}
# free text that validation accepts without a line break: it must not reach any rendered configuration
ACCEPTED = {("description", name) for name in PAYLOADS if name not in LINE_BREAKS}


def _node(doc: Any, path: list[Any]) -> Any:
    for part in path:
        if isinstance(part, str) and doc.get(part) is None:
            doc[part] = {} if part not in ("tags",) else ["x"]
        doc = doc[part]
    return doc


def _apply(docs: dict[str, Any], edit: Edit, payload: str) -> tuple[str, list[Any], str]:
    """Apply one edit; returns (file, path of the value, hostile value)."""
    op, file = edit[0], edit[1]
    doc = docs[KIND[file]]
    if op == "set":
        path, clean = edit[2], edit[3]
        value = clean + payload
        _node(doc, path[:-1])[path[-1]] = value
        return file, path, value
    if op == "rename":
        parent, key = _node(doc, edit[2]), edit[3]
        value = key + payload
        parent[value] = parent.pop(key)
        return file, [*edit[2], value], value
    parent, key = _node(doc, edit[2]), edit[3] + payload
    parent[key] = edit[4]
    return file, [*edit[2], key], key


def _stage_one(docs: dict[str, Any], only: str | None = None) -> Problems:
    """What ``compile_inventory`` checks before the model is built (credentials, text, schemas), of every file
    or only of the file ``only`` (these checks look at one file at a time)."""
    problems = Problems()
    data = {KIND[only]: docs[KIND[only]]} if only else docs
    raw = RawInventory(INVENTORY, {kind: name for kind, (name, _) in FILES.items()}, data)
    schema.check_credentials(raw, problems)
    schema.check_text(raw, problems)
    schema.check_files(raw, problems)
    return problems


def _names(problems: Problems, file: str, path: list[Any], value: str) -> bool:
    """A problem of ``file`` at ``path`` (or inside it), or one that quotes the hostile value."""
    where = format_path(path)
    quoted = brief(value)[1:25]
    return any(
        p.file == file
        and (p.path == where or p.path.startswith((where + ".", where + "[")) or quoted in p.path + p.message)
        for p in problems.errors
    )


def _cases() -> Iterator[Any]:
    for field, per_platform in FIELDS.items():
        for platform, edit in per_platform.items():
            yield pytest.param(field, platform, edit, id=f"{field}-{platform}")


@pytest.mark.parametrize(("field", "platform", "edit"), list(_cases()))
def test_each_field_on_each_platform_is_refused_or_harmless(
    field: str, platform: str, edit: Edit, example: Compiled, tmp_path: Path
) -> None:
    accepted = ""
    for name, payload in PAYLOADS.items():
        if (field, name) in ACCEPTED:
            accepted += payload
            continue
        docs = copy.deepcopy(DOCS)
        file, path, value = _apply(docs, edit, payload)
        problems = _stage_one(docs, file)
        if not problems.errors:  # not a schema matter: the cross-checks must refuse it
            problems = _full(docs, tmp_path / name.replace(" ", "-"))
        assert _names(problems, file, path, value), (field, platform, name, [str(p) for p in problems])
    if accepted:  # every accepted payload at once (one compile): validates, and no configuration changes
        docs = copy.deepcopy(DOCS)
        _apply(docs, edit, accepted)
        assert not _stage_one(docs).errors, (field, accepted)
        compiled = compile_inventory(_write(docs, tmp_path / "accepted"))
        for device, data in compiled.data.items():
            assert render(data) == render(example.data[device]), (field, device)


def _write(docs: dict[str, Any], target: Path) -> Path:
    shutil.copytree(INVENTORY, target)
    for kind, (name, _) in FILES.items():
        (target / name).write_text(yaml.safe_dump(docs[kind], sort_keys=False, allow_unicode=True))
    return target


def _full(docs: dict[str, Any], target: Path) -> Problems:
    try:
        compile_inventory(_write(docs, target))
    except InputError as exc:
        return exc.problems
    return Problems()


def test_every_field_is_tried_on_every_platform_it_reaches() -> None:
    """The matrix itself: switch-only and host-only fields aside, every field on all four platforms."""
    host_only = {"NIC netdev", "NIC rdma", "NIC pci", "NIC adapter", "NCCL key", "NCCL value"}
    host_only |= {"mlxconfig key", "mlxconfig value"}
    switch_only = {"model", "os_version", "port range"}
    for field, per_platform in FIELDS.items():
        want = (
            {"linux"} if field in host_only else {"cumulus", "eos", "nxos"} if field in switch_only else set(PLATFORMS)
        )
        assert set(per_platform) == want, field
    assert len(PAYLOADS) >= 15


# ---- past validation: shell payloads in GPU host device data reach only quoted words ----------------------------
SHELL = {name: payload for name, payload in PAYLOADS.items() if name not in LINE_BREAKS}


def _operators(command: str) -> list[str]:
    """The shell operators of one command line, outside quotes: ``;``, ``|``, ``&&``, ``>``, ``(`` ..."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    return [t for t in tokens if t and all(c in "();<>|&" for c in t)]


def _commands(data: dict[str, Any]) -> list[str]:
    target = desired_target(load_document(render(data)))
    observed = HostObserved(
        target.hostname,
        {
            n.netdev: NicObserved(n.netdev, n.rdma, mtu=1500, trust="pcp", pfc=[0] * 8, ecn_np=[0] * 8, ecn_rp=[0] * 8)
            for n in target.nics
        },
    )
    return [command for change in plan(target, observed, sudo="sudo ") for command in change.commands]


def _host_strings(data: dict[str, Any]) -> Iterator[tuple[tuple[Any, ...], bool]]:
    """(path, is_key) of every string value and every key of the mlxconfig and NCCL tables."""

    def walk(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], bool]]:
        if isinstance(node, dict):
            for key, value in node.items():
                if path and path[-1] in ("mlxconfig", "nccl"):
                    yield (*path, key), True
                yield from walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, (*path, i))
        elif isinstance(node, str):
            yield path, False

    yield from walk(data, ())


ALL_SHELL = "".join(SHELL.values())  # every metacharacter and command form in one value


def _hostile_plans(data: dict[str, Any], paths: list[tuple[tuple[Any, ...], bool]], suffix: str) -> int:
    """Append ``suffix`` to each path's string (or key) in turn; every plan keeps the clean plan's operators
    and carries the value inside one word. Returns how many commands carried a hostile value."""
    clean_ops = sorted(op for command in _commands(data) for op in _operators(command))
    assert clean_ops, "the plan has pipes and redirections of its own"
    reached = 0
    for path, is_key in paths:
        hostile_data = copy.deepcopy(data)
        parent = hostile_data
        for part in path[:-1]:
            parent = parent[part]
        hostile = str(path[-1] if is_key else parent[path[-1]]) + suffix
        if is_key:
            parent[hostile] = parent.pop(path[-1])
        else:
            parent[path[-1]] = hostile
        try:
            commands = _commands(hostile_data)
        except ValueError:  # UnsafeValueError, DocumentError, an address that does not parse: no command built
            continue
        ops = sorted(op for command in commands for op in _operators(command))
        assert ops == clean_ops, (path, suffix, [c for c in commands if hostile in c or shlex.quote(hostile) in c])
        for command in commands:
            if shlex.quote(hostile) in command:
                reached += 1
                assert hostile in shlex.split(command), (path, command)
    return reached


def test_gpu_host_commands_quote_every_string(example: Compiled) -> None:
    """Every string value of a GPU host's device data, and every mlxconfig and NCCL key, with all the shell
    payloads at once."""
    data = example.data["gpu01"]
    paths = [(p, k) for p, k in _host_strings(data) if p != ("platform",)]
    assert len(paths) > 20
    assert _hostile_plans(data, paths, ALL_SHELL) > 0, "no hostile value reached a command"


KEY_PATHS = [
    (("hostname",), False),
    (("nics", 0, "netdev"), False),
    (("nics", 0, "rdma"), False),
    (("mlxconfig", "LINK_TYPE_P1"), False),
    (("mlxconfig", "LINK_TYPE_P1"), True),
]


@pytest.mark.parametrize("payload", list(SHELL), ids=list(SHELL))
def test_gpu_host_commands_quote_each_payload(example: Compiled, payload: str) -> None:
    """Each payload alone in the values that become command arguments (names, mlxconfig keys and values)."""
    assert _hostile_plans(example.data["gpu01"], KEY_PATHS, SHELL[payload]) > 0


@pytest.mark.parametrize("table", ["mlxconfig", "nccl"])
@pytest.mark.parametrize("payload", LINE_BREAKS)
def test_a_line_break_in_an_mlxconfig_or_nccl_key_is_refused_when_rendering(
    example: Compiled, table: str, payload: str
) -> None:
    """``tests/test_injection.py`` tries every value; the keys of these two tables reach the host as well."""
    data = copy.deepcopy(example.data["gpu01"])
    assert data[table], table
    key = next(iter(data[table]))
    data[table][key + PAYLOADS[payload]] = data[table].pop(key)
    with pytest.raises(UnsafeValueError):
        render(data)


# ---- past validation: shell payloads in switch device data stay inside the value they were written into ---------
def _swap(node: Any, bad: str, good: str) -> Any:
    if isinstance(node, dict):
        return {_swap(k, bad, good): _swap(v, bad, good) for k, v in node.items()}
    if isinstance(node, list):
        return [_swap(v, bad, good) for v in node]
    return node.replace(bad, good) if isinstance(node, str) else node


def _cli_shape_kept(clean: str, text: str, hostile: str) -> bool:
    """Line for line the clean configuration, the hostile value only inside lines that start as before."""
    before, after = clean.splitlines(), text.splitlines()
    if len(before) != len(after):
        return False
    for old, new in zip(before, after, strict=True):
        if old != new:
            words = old.split()
            if hostile not in new or not words or not new.startswith(old[: len(old) - len(old.lstrip())] + words[0]):
                return False
    return True


@pytest.mark.parametrize("platform", ["cumulus", "eos", "nxos"])
def test_switch_configs_keep_their_shape_with_shell_payloads(example: Compiled, platform: str) -> None:
    """Every string of a switch's device data with every shell payload at once: NVUE's tree is the same tree
    with the value in its place (every value and key quoted); a CLI keeps every line and each line's command.
    A value only used for template logic (an interface ``kind``) may select other lines, with no payload."""
    data0 = example.data[DEVICE[platform]]
    clean = render(data0)
    checked = 0
    for path, _ in _host_strings(data0):
        if path == ("platform",):
            continue
        data = copy.deepcopy(data0)
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        old = parent[path[-1]]
        hostile = old + ALL_SHELL
        parent[path[-1]] = hostile
        try:
            text = render(data)
        except UnsafeValueError:
            continue
        if hostile not in text and shlex.quote(hostile) not in text and ALL_SHELL[:6] not in text:
            continue  # template logic only: the payload reached no line
        checked += 1
        if platform == "cumulus":
            tree = yaml.safe_load(text)
            assert _swap(tree, hostile, old) == yaml.safe_load(clean), path
        else:
            assert _cli_shape_kept(clean, text, hostile), path
    assert checked > 10
