"""The package list, discovered: every package under ``fabconf/`` and ``fabconf_lab/`` (a new platform package
ships without an edit here), plus ``templates/`` as ``fabconf._templates`` (pyproject.toml's ``package-dir``),
which discovery cannot name. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

PACKAGES = [
    *find_packages(include=["fabconf", "fabconf.*", "fabconf_lab", "fabconf_lab.*"]),
    "fabconf._templates",
    "fabconf._example",
]

if __name__ == "__main__":  # the build backend runs it so; tests/unit/cli/test_packaging.py reads PACKAGES
    setup(packages=PACKAGES)
