"""The platform packages: one per platform (``fabconf/platform/<name>/``), each registering itself with the
registry (fabconf.platforms), which discovers them. Importing any of them imports the registry first, so the
table is whole before a platform package's own code runs."""

from fabconf import platforms as _registry  # noqa: F401  (fills the registry: see the docstring)
