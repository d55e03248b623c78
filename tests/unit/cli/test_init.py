"""``fabconf init DIR`` writes the example inventory from the installed package, so that a user works on a copy
of their own; and the tests read a pristine example even where the clone's ``inventory/`` was edited (issue #40)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from pristine import EXAMPLE

from fabconf.cli import main
from fabconf.cli.init import example_files

TESTS = Path(__file__).resolve().parents[2]


def test_init_writes_the_example_that_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "my-fabric"
    assert main(["init", str(target)]) == 0
    assert f"fabconf validate -i {target}" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in target.iterdir()} == example_files()  # the installed package's example
    assert sorted(example_files()) == ["cabling.yaml", "defaults.yaml", "fabric.yaml", "groups.yaml", "hosts.yaml"]
    for path in target.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) & 0o022 == 0, path  # never group- or world-writable
    assert main(["validate", "-i", str(target)]) == 0
    assert "valid: " in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["not empty", "symlink", "file"])
def test_init_refuses_a_place_that_holds_something(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "mine"
    if kind == "not empty":
        target.mkdir()
        (target / "fabric.yaml").write_text("mine: true\n")
    elif kind == "symlink":
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    else:
        target.write_text("a file\n")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert main(["init", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"fabconf: {target}: ") and "Traceback" not in err
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing written, nothing followed
    if kind == "not empty":
        assert (target / "fabric.yaml").read_text() == "mine: true\n"


def test_tests_read_head_s_example_when_the_clone_s_inventory_was_edited(tmp_path: Path) -> None:
    """Onboarding a rack into the clone's own inventory/ made 19 unit tests fail: the tests' example is the
    checked-out commit's, extracted from git, whenever the working tree's copy differs from it."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    clone = tmp_path / "clone"
    shutil.copytree(EXAMPLE, clone / "inventory")
    (clone / "tests").mkdir()
    shutil.copy(TESTS / "pristine.py", clone / "tests" / "pristine.py")
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "example"], check=True)
    env = {k: v for k, v in os.environ.items() if k != "FABCONF_TEST_EXAMPLE"}
    show = [
        sys.executable,
        "-c",
        "import pristine; e = pristine.EXAMPLE; print(e); print(sorted(p.name for p in e.iterdir()));"
        "print((e / 'fabric.yaml').read_text().endswith('# edited\\n'))",
    ]

    def example() -> list[str]:
        out = subprocess.run(show, cwd=clone / "tests", env=env, capture_output=True, text=True, check=True)
        return out.stdout.splitlines()

    files = str(["cabling.yaml", "defaults.yaml", "fabric.yaml", "groups.yaml", "hosts.yaml"])
    assert example() == [str(clone / "inventory"), files, "False"]  # unchanged: the working tree's own, no copy
    with (clone / "inventory" / "fabric.yaml").open("a") as fabric:
        fabric.write("# edited\n")
    (clone / "inventory" / "rack9.yaml").write_text("added: true\n")
    where, names, edited = example()
    assert where != str(clone / "inventory")
    assert (names, edited) == (files, "False")  # HEAD's files, as committed
    assert not Path(where).exists()  # removed at exit by the process that extracted it
