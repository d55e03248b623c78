"""``fabconf init DIR``: a copy of the example inventory to work on, written from the installed package.

The example pod (the clone's ``inventory/``) ships inside the wheel as ``fabconf._example``, so that a user
who installed fabconf with pip, or who works beside a clone, edits a copy of their own: onboarding a rack into
the clone's own ``inventory/`` changed files the tests compare against their goldens (issue #40)."""

from __future__ import annotations

import argparse
import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from fabconf.errors import FabconfError


def example_files() -> dict[str, bytes]:
    """The example inventory's files as the installed package holds them: name -> content."""
    try:
        root: Traversable = resources.files("fabconf._example")
    except ModuleNotFoundError:  # an editable install: setuptools' finder cannot import a mapped data-only package
        root = Path(__file__).resolve().parents[2] / "inventory"
    return {
        entry.name: entry.read_bytes()
        for entry in sorted(root.iterdir(), key=lambda e: e.name)
        if entry.is_file() and entry.name.endswith(".yaml")
    }


def write_example(directory: Path) -> list[Path]:
    """Write the example inventory into ``directory``: created (0755) if missing, refused if it holds anything
    already or is a symlink; each file created 0644 with its content, never through a symlink."""
    if directory.is_symlink():
        raise FabconfError(f"{directory}: a symbolic link; name a new directory")
    if directory.exists():
        if not directory.is_dir():
            raise FabconfError(f"{directory}: exists and is not a directory")
        if any(directory.iterdir()):
            raise FabconfError(f"{directory}: not empty; `fabconf init` writes only into a new or empty directory")
    directory.mkdir(mode=0o755, parents=True, exist_ok=True)
    written = []
    for name, content in example_files().items():
        path = directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as stream:
            stream.write(content)
        written.append(path)
    return written


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "init",
        help="write the example inventory into a new directory, to work on a copy of your own",
        description="Write the example inventory (2 spines, 4 leaves, 8 GPU hosts) into DIR, a new or empty "
        "directory: then `fabconf validate -i DIR`, `fabconf diff -i DIR --lab`.",
    )
    p.add_argument("directory", type=Path, metavar="DIR", help="the directory to create (must be new or empty)")
    p.set_defaults(func=run_init)


def run_init(args: argparse.Namespace) -> int:
    written = write_example(args.directory)
    print(f"wrote {len(written)} file(s) of the example inventory to {args.directory}/")
    print(f"next: fabconf validate -i {args.directory} && fabconf diff -i {args.directory} --lab")
    return 0
