"""No inventory value can add a line, a key or a command to any device (issue 18), even when it reaches
the renderer without validation: every string of every platform's device data is tried with a line break.

Either rendering refuses the value (``UnsafeValueError``), or the value lands in the one comment line that
the ``comment`` filter builds and nothing else of the rendered configuration changes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from fabconf.compile.pipeline import Compiled
from fabconf.compile.render import UNSAFE, UnsafeValueError, _comment, render

ONE_PER_PLATFORM = ("leaf1", "leaf3", "leaf4", "gpu01")  # cumulus, eos, nxos, linux
HOSTILE = (
    "\nusername evil privilege 15 secret evilpass\n!",
    "\r\n- set: {system: {hostname: evil}}",
    "\x00evil",
    "\u2028evil",
)


def _strings(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, (*path, i))
    elif isinstance(node, str):
        yield path


def _set(data: dict[str, Any], path: tuple[Any, ...], value: str) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


@pytest.mark.parametrize("device", ONE_PER_PLATFORM)
@pytest.mark.parametrize("hostile", HOSTILE, ids=["eos-admin", "nvue-object", "nul", "line-separator"])
def test_no_device_data_string_adds_a_line(example: Compiled, device: str, hostile: str) -> None:
    clean = render(example.data[device])
    paths = list(_strings(example.data[device]))
    assert len(paths) > 5  # the walk reaches the data, not just the top level
    commented = []
    for path in paths:
        if path == ("platform",):
            continue  # selects the template; not a value that reaches a device
        data = copy.deepcopy(example.data[device])
        _set(data, path, str(data_at(data, path)) + hostile)
        try:
            text = render(data)
        except UnsafeValueError:
            continue
        # rendered: no control character anywhere, no new line made of the payload, the payload (if shown) only
        # inside a comment line. (A value used only for template logic, like an interface kind, may change
        # which lines are rendered: that is not injection.)
        assert not UNSAFE.search(text.replace("\n", "")), path
        lines = text.splitlines()
        assert not [ln for ln in lines if ln.lstrip().startswith("username")], path
        assert sum(ln.startswith("- set:") for ln in lines) == sum(ln.startswith("- set:") for ln in clean.splitlines())
        shown = [ln for ln in lines if "evil" in ln]
        assert all(ln.startswith(("#", "!")) for ln in shown), (path, shown)
        if shown:
            commented.append(path)
    assert ("model",) in commented or device == "gpu01"


def data_at(data: dict[str, Any], path: tuple[Any, ...]) -> Any:
    node: Any = data
    for part in path:
        node = node[part]
    return node


def test_the_comment_filter_cannot_be_broken_out_of() -> None:
    for text in ("a\nb", "a\r\nb", "a\x1b[2Jb", "a\u2028b", "a\x85b", "x" * 1000):
        line = _comment(text, "!")
        assert "\n" not in line and "\r" not in line and len(line) <= 202
        assert line.startswith("! ")


def test_a_hostile_model_stays_in_its_comment_on_every_platform(example: Compiled) -> None:
    model = "DCS\nusername evil privilege 15 secret evilpass\n!"
    for device in ONE_PER_PLATFORM[:3]:
        data = copy.deepcopy(example.data[device])
        data["model"] = model
        text = render(data)
        assert not [line for line in text.splitlines() if line.lstrip().startswith("username")]
        assert sum("username evil" in line for line in text.splitlines()) == 1  # inside the comment
    nvue = copy.deepcopy(example.data["leaf1"])
    nvue["model"] = "SN5600\n- set:\n    interface: {swp1: {link: {state: down}}}"
    tree = yaml.safe_load(render(nvue))
    assert tree == yaml.safe_load(render(example.data["leaf1"]))  # not one key added


def test_hostile_nccl_values_are_refused_when_rendering(example: Compiled) -> None:
    for value in ("INFO\n  NCCL_EVIL_INJECTED=1", "1\nroce_tos: 0"):
        data = copy.deepcopy(example.data["gpu01"])
        data["nccl"]["NCCL_DEBUG"] = value
        with pytest.raises(UnsafeValueError, match="line break"):
            render(data)
