"""Properties of rendering: determinism, one intent change moves every platform, outputs parse."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hier_config import Platform, get_hconfig
from pristine import EXAMPLE

from fabconf.cli import main
from fabconf.compile.checks import check_device_data
from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.compile.problems import Problems
from fabconf.compile.render import render
from fabconf.compile.selection import SelectionError, select


def _render_all(compiled: Compiled) -> dict[str, str]:
    return {name: render(data) for name, data in compiled.data.items()}


def test_rendering_twice_is_byte_identical(inventory_copy: Path) -> None:
    first = _render_all(compile_inventory(inventory_copy))
    second = _render_all(compile_inventory(inventory_copy))
    assert first == second


def test_cli_render_writes_one_file_per_device(inventory_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["render", "-i", str(inventory_copy), "-o", str(out)]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(
        [f"gpu0{i}.yaml" for i in range(1, 9)]
        + ["leaf1.yaml", "leaf2.yaml", "leaf3.cfg", "leaf4.cfg", "spine1.cfg", "spine2.cfg"]
    )
    again = tmp_path / "again"
    assert main(["render", "-i", str(inventory_copy), "-o", str(again)]) == 0
    for f in files:
        assert (out / f).read_bytes() == (again / f).read_bytes()


def test_roce_priority_change_moves_every_platform(inventory_copy: Path) -> None:
    fabric = inventory_copy / "fabric.yaml"
    text = fabric.read_text()
    text = text.replace("priority: 3              #", "priority: 4              #")
    text = text.replace("pfc_priorities: [3]", "pfc_priorities: [4]")
    fabric.write_text(text)
    out = _render_all(compile_inventory(inventory_copy))
    # Cumulus: DSCP 26 -> switch priority 4, PFC and ECN on 4, queue 4 scheduled
    leaf1 = yaml.safe_load(out["leaf1"])[0]["set"]["qos"]
    assert leaf1["mapping"]["default-global"]["dscp"]["26"] == {"switch-priority": 4}
    assert list(leaf1["pfc"]["default-global"]["switch-priority"]) == ["4"]
    assert list(leaf1["congestion-control"]["default-global"]["traffic-class"]) == ["4"]
    assert leaf1["egress-queue-mapping"]["default-global"]["switch-priority"]["4"] == {"traffic-class": 4}
    # EOS
    assert "qos map dscp 26 to traffic-class 4" in out["leaf3"]
    assert "priority-flow-control priority 4 no-drop" in out["leaf3"]
    assert re.search(
        r"tx-queue 4\n      no priority\n      bandwidth percent 50\n      random-detect ecn", out["leaf3"]
    )
    assert "priority 3" not in out["leaf3"]
    # NX-OS
    assert "set qos-group 4" in out["leaf4"]
    assert "class type network-qos c-8q-nq4\n    mtu 9216\n    pause pfc-cos 4" in out["leaf4"]
    assert "class type queuing c-out-8q-q4\n    bandwidth remaining percent 50\n    random-detect" in out["leaf4"]
    assert "pfc-cos 3" not in out["leaf4"]
    # hosts: PFC bit 4, DCQCN on 4, and DSCP 26 mapped to 4 in the full explicit map (the default would say 3)
    host = yaml.safe_load(out["gpu01"])
    assert host["qos"]["pfc"] == "0,0,0,0,1,0,0,0"
    assert dict(map(tuple, host["qos"]["dscp2prio"]))[26] == 4
    assert host["ecn"]["roce_np_enable"] == [4] and host["ecn"]["roce_rp_enable"] == [4]


@pytest.mark.parametrize(
    ("name", "platform"),
    [
        ("leaf3", Platform.ARISTA_EOS),
        ("spine1", Platform.ARISTA_EOS),
        ("leaf4", Platform.CISCO_NXOS),
        ("spine2", Platform.CISCO_NXOS),
    ],
)
def test_cli_output_parses_as_a_config_tree(example: Compiled, name: str, platform: Platform) -> None:
    text = render(example.data[name])
    tree = get_hconfig(platform, text)
    roots = {c.text for c in tree.children}
    assert f"hostname {name}" in roots
    assert any(r.startswith("router bgp ") for r in roots)
    bgp = next(c for c in tree.children if c.text.startswith("router bgp "))
    assert len(list(bgp.all_children())) >= 4
    if platform is Platform.ARISTA_EOS:
        profile = tree.get_child(equals="qos profile FABCONF_ROCE")
        assert profile is not None
        assert profile.get_child(equals="priority-flow-control priority 3 no-drop") is not None
        queue = example.data[name]["qos"]["queue_command"]  # uc-tx-queue (Strata) or tx-queue (Sand)
        q3 = profile.get_child(equals=f"{queue} 3")
        assert q3 is not None and any("random-detect ecn" in c.text for c in q3.children)
    else:
        nq = tree.get_child(equals="policy-map type network-qos FABCONF_NQ")
        assert nq is not None
        cls = nq.get_child(equals="class type network-qos c-8q-nq3")
        assert cls is not None and cls.get_child(equals="pause pfc-cos 3") is not None


def test_cumulus_output_is_an_nvue_tree(example: Compiled) -> None:
    for name in ("leaf1", "leaf2"):
        doc = yaml.safe_load(render(example.data[name]))
        assert isinstance(doc, list) and list(doc[0]) == ["set"]
        tree = doc[0]["set"]
        assert tree["system"]["hostname"] == name
        # quoted, not YAML 1.1 True; leaf2 runs 5.15, where `enable: on` became `state: enabled`
        on = {"enable": "on"} if example.data[name]["release_line"] == "5.9" else {"state": "enabled"}
        assert on.items() <= tree["router"]["bgp"].items()
        assert tree["interface"]["swp1"]["link"]["mtu"] == 9216
        assert tree["bridge"]["domain"]["br_default"]["vlan"] == {"101" if name == "leaf1" else "102": {}}
        multipaths = tree["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["multipaths"]
        assert multipaths == {"ebgp": 64}


def test_host_output_loads_and_matches_switch_side(example: Compiled) -> None:
    host = yaml.safe_load(render(example.data["gpu05"]))
    assert host["roce_tos"] == 106 and host["qos"]["trust"] == "dscp"
    assert [n["mtu"] for n in host["nics"]] == [9000, 9000]
    assert [n["peer"] for n in host["nics"]] == ["leaf3:Ethernet1/1", "leaf4:Ethernet1/1"]
    assert "NCCL_IB_TC=106" in host["nccl_conf"]
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1" in host["nccl_conf"]


def test_priority_chain_check_catches_a_broken_device(example: Compiled) -> None:
    """The end-to-end chain check reads device data; break one side and it must say where."""
    import copy

    data = copy.deepcopy(example.data)
    data["leaf3"]["qos"]["dscp_map"] = [{"dscps": [26], "tc": 2}, {"dscps": [48], "tc": 6}]
    data["gpu02"]["qos"]["pfc"] = [0] * 8
    data["leaf1"]["interfaces"][0]["pfc"] = False
    problems = Problems()
    check_device_data(example.model, example.topology, problems, data)
    text = [str(p) for p in problems]
    assert any("leaf3: switch maps DSCP 26 to traffic class 2, fabric expects 3" in t for t in text), text
    assert any("gpu02: host PFC is off on priority 3" in t for t in text), text
    assert any("leaf1: leaf1:swp1 faces gpu01 but has PFC off" in t for t in text), text


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("leaf1", ["leaf1"]),
        ("leaf*", ["leaf1", "leaf2", "leaf3", "leaf4"]),
        ("spines", ["spine1", "spine2"]),
        ("leaves,!sn5600", ["leaf3", "leaf4"]),
        ("gpu_hosts:&gpu0[1-2]", ["gpu01", "gpu02"]),
        ("n9k-9364d", ["leaf4", "spine2"]),
        ("!gpu_hosts", ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]),
    ],
)
def test_limit_patterns(example: Compiled, pattern: str, expected: list[str]) -> None:
    assert select(example.model, pattern) == expected


def test_limit_matching_nothing_is_an_error(example: Compiled, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SelectionError):
        select(example.model, "leaf9")
    assert main(["render", "-i", str(EXAMPLE), "--limit", "nope*", "-o", "/tmp/fabconf-none"]) == 1
    assert "'nope*' matches no device or group" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("term", "hint"),
    [("lef1", "did you mean 'leaf1'"), ("spines1", "'spines' or 'spine1'"), ("gpu_host", "'gpu_hosts'"), ("zzz", None)],
)
def test_limit_that_matches_nothing_suggests_close_names(example: Compiled, term: str, hint: str | None) -> None:
    with pytest.raises(SelectionError) as err:
        select(example.model, term)
    if hint is None:
        assert "did you mean" not in str(err.value)
    else:
        assert hint in str(err.value)


def test_cumulus_output_validates_against_nvidias_nvue_schema(example: Compiled, two_pods: Compiled) -> None:
    """Every rendered Cumulus tree, of both example fabrics, checked against the Pydantic models of NVIDIA's
    OpenAPI spec for the release the device runs (the nvueschema package), plus unknown keys and semantic checks
    (ports exist, ECN min < max, scheduler shares, pools…) -- and refused by the other release line's schema."""
    from fabconf_lab.nvue.schema import Validator, have_nvueschema

    assert have_nvueschema(), "nvueschema is a dependency; the hand-written subset would prove less"
    lines = set()
    for compiled in (example, two_pods):
        for name, data in compiled.data.items():
            if data["platform"] != "cumulus":
                continue
            release = ".".join(data["os_version"].split(".")[:2])
            other = "5.12" if data["release_line"] == "5.15" else "5.15"
            lines.add(data["release_line"])
            tree = yaml.safe_load(render(data))[0]["set"]
            ports = sorted(compiled.model.devices[name].ports or [])
            assert Validator(release).apply_errors(tree, ports) == [], name
            if data["release_line"] == "5.15":  # what `assume_release: "5.15"` relies on (docs/inventory/index.md)
                for newer in ("5.16", "5.17", "5.18"):
                    assert Validator(newer).apply_errors(tree, ports) == [], f"{name} on {newer}"
            assert Validator(other).schema_errors(tree), f"{name}: a {other} schema accepts a {release} tree"
            broken = copy.deepcopy(tree)
            broken["interface"]["swp1"]["link"]["mtu"] = 9300
            assert Validator(release).apply_errors(broken, ports), "a schema that accepts MTU 9300 proves nothing"
    assert lines == {"5.9", "5.15"}, "both release lines are rendered by the examples"


@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_closed_pipe_exits_quietly(tmp_path: Path, command: str) -> None:
    """`fabconf render | head -0`: the reader is gone before fabconf writes; no traceback, no error line. Without
    PYTHONUNBUFFERED (an ordinary user's shell): stdout is then block-buffered and met the closed pipe only at the
    interpreter's final flush, which printed "Exception ignored ... BrokenPipeError" and exited 120."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    read, write = os.pipe()
    os.close(read)
    args = ["-i", str(EXAMPLE)] + (["-o", str(tmp_path)] if command == "render" else [])
    proc = subprocess.run(
        [sys.executable, "-m", "fabconf", command, *args],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        check=False,
    )
    os.close(write)
    assert (proc.returncode, proc.stderr) == (141, "")


def test_library_log_lines_never_reach_the_terminal() -> None:
    """A peer resetting an SSH socket makes paramiko log an ERROR; the CLI keeps it off the terminal (the
    device's Outcome says what happened). Run in a subprocess: pytest's own log capture would hide it."""
    root = Path(__file__).resolve().parents[3]
    script = (
        "import logging, sys\n"
        "from fabconf.cli import main\n"
        f"main(['validate', '-i', {str(root / 'inventory')!r}])\n"
        "logging.getLogger('paramiko.transport').error('Socket exception: Connection reset by peer (104)')\n"
        "logging.getLogger('pyeapi.eapilib').error('a library traceback')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Socket exception" not in proc.stderr and "library traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("pattern", "shown", "hint"),
    [
        ("leaves,!lef1", "'!lef1'", "did you mean 'leaf1'"),
        ("leaves:!leaf9", "'!leaf9'", "'leaf1'"),
        ("gpu_hosts,&gpu9*", "'&gpu9*'", None),
        ("leafs", "'leafs'", "did you mean 'leaves'"),
        ("!spine[3-4]", "'!spine[3-4]'", None),
        ("leaves,!", "'!'", None),
    ],
)
def test_every_term_of_a_limit_must_match(example: Compiled, pattern: str, shown: str, hint: str | None) -> None:
    """A typo in an exclusion or an intersection is an error, never silently ignored (issue 27: `leaves,!lef1`
    selected leaf1, and `push --limit 'leaves:!leaf9'` pushed all four leaves)."""
    with pytest.raises(SelectionError) as err:
        select(example.model, pattern)
    assert shown in str(err.value)
    if hint is not None:
        assert hint in str(err.value)


def test_all_selects_every_device(example: Compiled) -> None:
    assert select(example.model, "all") == sorted(example.model.devices)


@pytest.mark.parametrize("command", ["push", "diff", "verify", "drift"])
def test_a_mistyped_exclusion_stops_before_any_device(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator's form: nothing is connected to (the inventory's devices are unreachable here, so reaching
    one would fail differently), exit 1 with the pattern's error on stderr."""
    args = [command, "-i", str(EXAMPLE), "--limit", "leaves:!leaf9"]
    if command == "push":
        args.append("--yes")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "--limit: '!leaf9' matches no device or group" in err
    assert "Traceback" not in err


def test_a_runbook_with_a_mistyped_step_limit_runs_no_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every step's `limit:` is checked before the first step runs: the diff step (which would reach for the
    unreachable example devices) never starts, and the problem names the runbook, the step and the term."""
    book = tmp_path / "book.yaml"
    book.write_text('name: typo\nsteps:\n  - diff: {limit: "leaves"}\n  - push: {limit: "leaves,!lef1"}\n')
    assert main(["run", str(book), "-i", str(EXAMPLE), "--yes"]) == 1
    captured = capsys.readouterr()
    assert "book.yaml: steps[1].push.limit: --limit: '!lef1' matches no device or group" in captured.err
    assert "did you mean 'leaf1'" in captured.err
    assert "== step 1" not in captured.err


def test_a_confirm_timeout_a_selected_platform_refuses_stops_before_any_device(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """NX-OS's commit timer takes 30-3600 s: `--confirm-timeout 10` is refused from the platform table before
    anything is touched (it failed at leaf4's commit, after the devices before it had changed)."""
    args = ["push", "-i", str(EXAMPLE), "--confirm-timeout", "10", "--yes"]
    assert main([*args, "--limit", "leaves"]) == 1
    err = capsys.readouterr().err
    assert "--confirm-timeout 10: too short for the selected devices' commit timers (nxos at least 30 s)" in err


def test_ecmp_per_role_and_platform_reaches_every_template(tmp_path: Path) -> None:
    """``ecmp.max_paths.<role>`` may name a width per platform: each switch of that role renders its platform's
    width (64 for a platform left out), with no per-device override."""
    inventory = tmp_path / "inventory"
    shutil.copytree(Path(__file__).resolve().parents[3] / "examples" / "two-pods", inventory)
    fabric = yaml.safe_load((inventory / "fabric.yaml").read_text())
    fabric["ecmp"]["max_paths"] = {"leaf": 32, "spine": {"cumulus": 128, "eos": 96}, "super_spine": {"nxos": 48}}
    (inventory / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    compiled = compile_inventory(inventory)
    widths = {name: compiled.data[name]["bgp"]["max_paths"] for name in ("p1-spine1", "p1-spine2", "p2-spine1")}
    assert widths == {"p1-spine1": 96, "p1-spine2": 128, "p2-spine1": 64}  # eos, cumulus, nxos (left out)
    assert compiled.data["ss2"]["bgp"]["max_paths"] == 48 and compiled.data["ss1"]["bgp"]["max_paths"] == 64
    assert "maximum-paths 96 ecmp 96" in render(compiled.data["p1-spine1"])
    assert "ebgp: 128" in render(compiled.data["p1-spine2"])
    assert "maximum-paths 48" in render(compiled.data["ss2"])
    assert {compiled.data[n]["bgp"]["max_paths"] for n in ("p1-leaf1", "p2-leaf1", "p2-leaf2")} == {32}
