"""Render device data through the per-platform Jinja2 templates, in process.

One Environment for the whole run (templates are compiled once and cached); StrictUndefined makes a
missing variable an error instead of an empty string. Templates see only the device-data dict.
"""

from __future__ import annotations

import json
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
    """A YAML-safe scalar: strings always double-quoted (JSON is YAML), numbers and booleans as is."""
    return json.dumps(value)


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,
    )
    env.filters["q"] = _quote
    return env


@cache
def entry_template(platform: str) -> jinja2.Template:
    return environment().get_template(ENTRY.format(platform=platform))


def render(data: dict[str, Any]) -> str:
    """The candidate configuration of one device."""
    return entry_template(data["platform"]).render(data)


def filename(name: str, platform: str) -> str:
    return name + platform_spec(platform).suffix
