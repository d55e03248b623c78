"""The wheel must carry every subpackage, schema and template (``pip install .`` then ``fabconf`` anywhere)."""

from __future__ import annotations

import runpy
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_every_subpackage_is_in_the_discovered_package_list() -> None:
    """setup.py discovers the packages (a new platform package ships without an edit to the list)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in config, "the package list is discovered by setup.py, not listed in pyproject.toml"
    listed = set(runpy.run_path(str(ROOT / "setup.py"), run_name="packages")["PACKAGES"])
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("fabconf", "fabconf_lab")
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert on_disk <= listed, f"not discovered by setup.py: {sorted(on_disk - listed)}"
    assert "fabconf._templates" in listed
    assert config["package-dir"]["fabconf._templates"] == "templates"
    assert {p.suffix for p in (ROOT / "fabconf" / "compile" / "schemas").iterdir() if p.is_file()} <= {".json", ".py"}


def test_version_is_printed_on_stdout_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    from fabconf.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code in (0, None)
    assert capsys.readouterr().out == f"fabconf {metadata.version('fabconf')}\n"


def test_the_public_api_is_what_it_lists_and_importing_it_loads_no_device_stack() -> None:
    """`fabconf.__all__` names the stable API; every name resolves; `import fabconf` alone imports neither NAPALM
    nor Nornir (a `fabconf render` must not pay for them)."""
    import subprocess
    import sys

    import fabconf

    for name in fabconf.__all__:
        assert getattr(fabconf, name) is not None, name
    code = "import sys, fabconf; fabconf.compile_inventory; print(sorted({'napalm', 'nornir'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
