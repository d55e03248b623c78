"""Render device data through the per-platform Jinja2 templates, in process.

One Environment for the whole run (templates are compiled once and cached); StrictUndefined makes a
missing variable an error instead of an empty string. Templates see only the device-data dict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from fabconf.platforms import platform as platform_spec

ENTRY = "{platform}/device.j2"


def templates_dir() -> Path:
    return Path(str(resources.files("fabconf._templates")))


def _quote(value: Any) -> str:
    """A YAML-safe scalar: strings always double-quoted (JSON is YAML), numbers and booleans as is. A
    control character is refused even though JSON would escape it: no device value carries one."""
    if type(value) is str:  # what json.dumps does with a str, without its encoder object (issue 42: 214,000 calls)
        return _json_string(_finalize(value))
    return json.dumps(_finalize(value))


# json.dumps(s) of a str s is exactly this (ensure_ascii, the default): JSONEncoder.encode's first case
_json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii


# A line break or control character in a value would end a CLI line, a YAML scalar, a line of nccl.conf or
# a shell command on the device: validation refuses them in the inventory, and rendering refuses them again
# here, in the one place every {{ value }} of every template goes through, in case data arrives unvalidated.
UNSAFE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")
COMMENT_MAX = 200


class UnsafeValueError(jinja2.TemplateError):
    """A value would add lines to a rendered configuration."""


def _finalize(value: Any) -> Any:
    if isinstance(value, str) and UNSAFE.search(value):
        raise UnsafeValueError(
            f"refusing to render {value!r}: a line break or control character would add lines to the device's "
            "configuration"
        )
    return value


def _comment(text: Any, marker: str = "#") -> str:
    """One comment line that nothing can break out of: control characters become ``?`` and the text is cut
    at COMMENT_MAX characters."""
    clean = UNSAFE.sub("?", str(text))
    if len(clean) > COMMENT_MAX:
        clean = clean[: COMMENT_MAX - 3] + "..."
    return f"{marker} {clean}"


_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """Jinja2's Environment, reading ``item.key`` of a plain dict by key at once. Jinja2 first asks for an
    attribute, and a dict has none but its methods: each ``route.destination`` raised and caught an AttributeError
    before the lookup, a third of rendering a GPU host's 88 routes (issue 42). A name of a dict method
    (``items``, ``keys``) still goes Jinja2's way, so every template reads exactly what it read before."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except (KeyError, TypeError):
                pass
        return super().getattr(obj, attribute)


@cache
def environment() -> jinja2.Environment:
    env = _Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,
        finalize=_finalize,
    )
    env.filters["q"] = _quote
    env.filters["comment"] = _comment
    return env


@cache
def entry_template(platform: str) -> jinja2.Template:
    return environment().get_template(ENTRY.format(platform=platform))


def render(data: dict[str, Any]) -> str:
    """The candidate configuration of one device."""
    return entry_template(data["platform"]).render(data)


def filename(name: str, platform: str) -> str:
    return name + platform_spec(platform).suffix
