"""PyYAML's safe loader and dumper, libyaml's when PyYAML is built with it: the same documents, about ten times
faster (an inventory file, and on every diff a host's and a Cumulus switch's document, are read and printed);
PyYAML's pure-Python ones otherwise."""

from __future__ import annotations

import yaml

SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SAFE_DUMPER: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
