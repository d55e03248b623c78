"""The example inventory the tests read, pristine even where the clone's own ``inventory/`` was edited.

The docs have a user work on a copy (``fabconf init DIR``), yet one who onboarded a rack into the clone's
``inventory/`` made 19 unit tests fail against their goldens (issue #40). The tests therefore read the example
as the checked-out commit has it: the working tree's ``inventory/`` when git says it is unchanged (the usual case,
no copy), else ``git archive HEAD inventory`` extracted once per test run into a directory of its own (its path in
``FABCONF_TEST_EXAMPLE``, so that xdist workers and subprocesses share it; removed at exit by the process that
made it). Outside a git checkout (an unpacked sdist) the working tree's copy is all there is."""

from __future__ import annotations

import atexit
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKING_TREE = ROOT / "inventory"
ENV = "FABCONF_TEST_EXAMPLE"


def _changed() -> bool:
    """Whether git says the working tree's ``inventory/`` differs from HEAD (edited, added or removed files)."""
    try:
        status = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all", "--", "inventory"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return False  # no git, or not a checkout: the working tree's copy is all there is
    return bool(status.stdout.strip())


def _from_head() -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", "HEAD", "inventory"],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout
    where = Path(tempfile.mkdtemp(prefix="fabconf-test-example-"))
    where.chmod(0o755)  # readable by the ordinary user some tests run fabconf as
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(where, filter="data")
        else:  # git's own archive of a tracked folder, nothing else
            tar.extractall(where)
    atexit.register(shutil.rmtree, where, True)
    return where / "inventory"


def example() -> Path:
    """The pristine example inventory's directory (see the module's docstring)."""
    shared = os.environ.get(ENV)
    if shared and Path(shared).is_dir():
        return Path(shared)
    where = _from_head() if _changed() else WORKING_TREE
    os.environ[ENV] = str(where)
    return where


EXAMPLE = example()
