"""A model of indented network-OS CLI configuration, shared by the EOS and NX-OS simulators.

API (stable; other simulators build on it):

- ``Node(text, children)``: one config line; ``children`` are its sub-mode lines. The root has ``text == ""``.
  Helpers: ``find(text)``, ``section(*path)``, ``copy()``, ``walk()`` (depth-first ``(depth, node)``),
  ``leaves()``.
- ``Dialect``: per-platform knowledge (``EOS`` and ``NXOS`` are provided; ``Dialect.extend(...)`` returns a
  copy with more rules). Indent width, ``!`` separators, the ``end`` trailer, which commands open which
  sub-mode, the command whitelist per mode, single-valued commands, stored ``no`` forms and numeric ranges.
- ``parse(text, dialect) -> Node``: lenient; children by indentation; ``!`` lines, blank lines and a top-level
  ``end`` are ignored.
- ``render(root, dialect) -> str``: text in the device's own style.
- ``Editor(root, dialect)``: applies config lines the way a device CLI does. ``apply(line)`` takes a line with
  indentation stripped (napalm EOS) and follows sub-modes, falling back to a parent mode when a line is not
  valid where it is; ``apply_indented(lines)`` also uses the indentation (napalm NX-OS merge); ``exit`` pops a
  level and ``end`` returns to the top. ``no X`` / ``default X`` remove the matching line or section;
  single-valued commands replace their previous value. A line valid in no mode raises ``CliError``.
- ``load(text, dialect) -> Node``: validated full configuration (what ``configure replace`` installs).
- ``unified_diff(old, new, dialect, fromfile, tofile)``: textual unified diff of the rendered configs
  (the form of EOS ``show session-config diffs``); ``tree_diff(old, new, dialect)``: hierarchical ``+``/``-``
  lines with their section headers as context, in the device's indentation.
- ``validate(root, dialect) -> list[CliError]``: check every line of a tree against the whitelist.

The whitelists are deliberately small: enough for everything fabconf renders (interfaces, VLANs, BGP, RoCE
QoS) plus common brownfield lines. A garbage line fails with ``% Invalid input`` (EOS eAPI code 1002).
"""

from __future__ import annotations

from fabconf_lab.cliconf.core import (
    CliError,
    Dialect,
    Editor,
    Node,
    invalid,
    lines_of,
    load,
    parse,
    render,
    tree_diff,
    unified_diff,
    validate,
)
from fabconf_lab.cliconf.dialects import EOS, NXOS

__all__ = [
    "EOS",
    "NXOS",
    "CliError",
    "Dialect",
    "Editor",
    "Node",
    "invalid",
    "lines_of",
    "load",
    "parse",
    "render",
    "tree_diff",
    "unified_diff",
    "validate",
]
