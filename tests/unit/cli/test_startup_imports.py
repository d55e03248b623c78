"""Start-up imports only what a command needs (issue 42): measured by the benchmark (bench/bench_startup.py),
kept here as what a run loads, never as a time."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

ROOT = Path(__file__).resolve().parents[3]
PROBE = """
import json, sys
from fabconf.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps(sorted(sys.modules)))
"""
DEVICE_STACK = {"napalm", "nornir", "netmiko", "paramiko"}
cli_main = importlib.import_module("fabconf.cli.main")  # the module (fabconf.cli.main is also the function)


def modules(*words: str) -> set[str]:
    """Every module a run of ``fabconf WORDS`` loaded, by its full name."""
    run = subprocess.run([sys.executable, "-c", PROBE, *words], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(json.loads(run.stdout.splitlines()[-1]))


def loaded(*words: str) -> set[str]:
    """The top-level packages a run of ``fabconf WORDS`` loaded."""
    return {m.split(".")[0] for m in modules(*words)}


def test_version_loads_neither_the_compile_nor_the_device_stack() -> None:
    modules = loaded("--version")
    assert not ({"jinja2", "yaml", "jsonschema"} | DEVICE_STACK) & modules


def test_validate_loads_no_device_stack_and_no_jinja2() -> None:
    modules = loaded("validate", "-i", str(ROOT / "inventory"))
    assert not (DEVICE_STACK | {"jinja2"}) & modules


def test_a_template_error_is_still_reported_as_a_fabconf_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_args: object) -> int:
        jinja2.Environment().from_string("{{ x | no_such_filter }}")
        return 0

    monkeypatch.setattr(cli_main, "_validate", broken)
    assert cli_main.main(["validate"]) == cli_main.EXIT_ERROR
    assert "template error (a fabconf bug" in capsys.readouterr().err


@pytest.mark.parametrize("words", [("audit", "--format", "json"), ("report", "merge", "--help")])
def test_audit_and_report_merge_load_no_device_stack(
    words: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    assert not DEVICE_STACK & loaded(*words)


DEVICE_COMMANDS = (
    "diff",
    "push",
    "verify",
    "drift",
    "preflight",
    "lab",
    "monitoring",
    "onboard",
    "plan",
    "docs",
    "run",
    "sot",
    "init",
)


@pytest.mark.parametrize("command", DEVICE_COMMANDS)
def test_a_commands_help_loads_no_device_stack(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the parser of every command is built without its run: a handler imports the jobs it calls (issue 42)
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    assert not DEVICE_STACK & loaded(command, "--help")


def test_a_usage_error_loads_no_device_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    assert not DEVICE_STACK & loaded("diff", "--no-such-option")


# what the device commands' parsers need is argparse and their options' defaults: not the report (rich), the
# progress bar, the lab's command module, the model (through the job descriptions), YAML, Jinja2, JSON Schema,
# TLS or the random-name helpers (`python -X importtime -m fabconf diff --help`; bench/bench_startup.py)
LIGHT_PARSER_MUST_NOT = (
    "fabconf.cli.report",
    "fabconf.cli.progress",
    "fabconf.cli.lab",
    "fabconf.deploy.job",
    "fabconf.compile.model",
    "fabconf.compile.pipeline",
    "fabconf_lab",
    "rich",
    "yaml",
    "jinja2",
    "jsonschema",
    "ssl",
    "secrets",
)


@pytest.mark.parametrize(
    "words", [("diff", "--help"), ("verify", "--help"), ("push", "--help"), ("push", "--bogus"), ("drift", "--help")]
)
def test_a_device_commands_parser_loads_only_argparse_and_its_defaults(
    words: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    assert not set(LIGHT_PARSER_MUST_NOT) & modules(*words)


def test_lab_status_loads_no_model_and_validate_no_tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    assert not {"fabconf.compile.model", "fabconf.compile.pipeline", "yaml"} & modules(
        "lab", "status", "--state", str(tmp_path / "lab")
    )
    assert not {"ssl", "secrets", "rich"} & modules("validate", "-i", str(ROOT / "inventory"))


@pytest.mark.parametrize("action", ["status", "down"])
def test_lab_status_and_down_load_no_device_stack(action: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no lab runs in this state directory: status says so, down has nothing to stop; neither talks to a device
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    monkeypatch.setenv("FABCONF_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    assert not DEVICE_STACK & loaded("lab", action, "--state", str(tmp_path / "lab"))


def test_the_whole_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    # a run of one command builds its parser alone; `fabconf --help` builds them all
    with pytest.raises(SystemExit):
        cli_main.main(["--help"])
    listed = capsys.readouterr().out
    for command in (*DEVICE_COMMANDS, "validate", "render", "audit", "report"):
        assert f"\n    {command} " in listed or f"\n    {command}\n" in listed, command
    assert set(cli_main.DEVICE_COMMANDS) == set(DEVICE_COMMANDS)


def test_a_valid_cold_inventory_never_imports_jsonschema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled schema check is built from the schema file, not from jsonschema's validator: a valid inventory
    read cold (no compile cache) passes it without jsonschema being imported at all."""
    monkeypatch.setenv("FABCONF_LOG", str(tmp_path / "fabconf.log"))
    monkeypatch.setenv("FABCONF_CACHE", "off")
    for inventory in (ROOT / "inventory", ROOT / "examples" / "two-pods"):
        assert "jsonschema" not in loaded("validate", "-i", str(inventory))
