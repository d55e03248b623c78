"""The topology and cross-checks reused from the compile cache across MTU edits (``fabconf.compile.derived``, issue
42): whatever the edits, valid or not, every run with the cache says and writes exactly what a cold run does; only an
edit of switches' MTUs reuses a stored entry, and a damaged entry is never taken."""

from __future__ import annotations

import ast
import inspect
import marshal
import os
import random
from pathlib import Path
from typing import Any, Protocol

import pytest
import yaml

from fabconf.cli import main
from fabconf.compile import cache, checks, derived, topology, vlanplace

Outcome = tuple[int, str, str, dict[str, bytes]]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _outcomes(inv: Path, tmp: Path, capsys: pytest.CaptureFixture[str], limit: str) -> Outcome:
    """``validate`` then ``render --limit``: exit codes, what they print (the render's time left out) and the files."""
    code, out, err = _run(["validate", "-i", str(inv)], capsys)
    target = tmp / "out"
    if target.exists():
        for path in target.iterdir():
            path.unlink()
    rcode, rout, rerr = _run(["render", "-i", str(inv), "-o", str(target), "--limit", limit], capsys)
    files = {p.name: p.read_bytes() for p in target.iterdir()} if target.exists() else {}
    return code * 10 + rcode, out, err + "\n--\n" + rerr + rout.partition(" in ")[0], files


class Both(Protocol):
    def __call__(self, limit: str, why: object = None) -> Outcome: ...


@pytest.fixture
def both(
    inventory_copy: Path,
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Both:
    """Runs ``_outcomes`` with the cache on (``cache_dir``), checks it against the same with the cache off, and returns
    it."""

    def run(limit: str, why: object = None) -> Outcome:
        monkeypatch.delenv("FABCONF_CACHE", raising=False)
        warm = _outcomes(inventory_copy, tmp_path, capsys, limit)
        monkeypatch.setenv("FABCONF_CACHE", "off")
        cold = _outcomes(inventory_copy, tmp_path, capsys, limit)
        monkeypatch.delenv("FABCONF_CACHE")
        assert warm == cold, why
        return warm

    return run


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("derived-*")) if cache_dir.exists() else []


def _load(inv: Path, name: str) -> Any:
    return yaml.safe_load((inv / name).read_text())


def _dump(inv: Path, name: str, doc: Any) -> None:
    (inv / name).write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=1000))


def _set_mtu(inv: Path, device: str, mtu: int | None) -> None:
    hosts = _load(inv, "hosts.yaml")
    data = hosts[device].setdefault("data", {})
    if mtu is None:
        data.pop("mtu", None)
    else:
        data["mtu"] = mtu
    _dump(inv, "hosts.yaml", hosts)


LOCAL_VALUES: dict[str, list[Any]] = {
    "os_version": [None, "5.15.0", "5.9.1", "4.0", "4.30.1F", "10.5(2)F", "10.3(4a)"],
    "assume_release": [None, "5.15", "4.32", "10.5"],
    "model": [None, "sn5600", "sn4700", "dcs-7060x5", "dcs-7280r3", "n9k-9364d", "nosuch"],
    "ecmp_max_paths": [None, 1, 2, 64, 128],
    "load_balancing": [None, "ecmp", "adaptive"],
    "telemetry": [None, True, False],
}


def _random_edit(inv: Path, pristine: dict[str, str], rng: random.Random) -> str:
    """One edit of the inventory, valid or not: most often a device's MTU (what the cache reuses across), else one
    that must be derived and checked again (an id, an address, a group, a role, a link, the fabric's MTU)."""
    hosts = _load(inv, "hosts.yaml")
    names = list(hosts)
    switches = [n for n in names if not n.startswith("gpu")]
    device = rng.choice(switches if rng.random() < 0.8 else names)
    kind = rng.choice(["mtu"] * 4 + ["local"] * 4 + ["id", "hostname", "group", "role", "link", "fabric mtu", "revert"])
    data = hosts[device].setdefault("data", {})
    if kind == "mtu":
        value = rng.choice([None, 1500, 9000, 9100, 9214, 9216, 9300])
        _set_mtu(inv, device, value)
        return f"{device} mtu {value}"
    if kind == "local":  # one of the other keys the cache leaves out of its key, set to a value right or wrong here
        key = rng.choice(sorted(LOCAL_VALUES))
        value = rng.choice(LOCAL_VALUES[key])
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        _dump(inv, "hosts.yaml", hosts)
        return f"{device} {key} {value}"
    if kind == "id":
        data["id"] = rng.choice([1, 2, 3, 4, 99])
    elif kind == "hostname":
        hosts[device]["hostname"] = hosts[rng.choice(names)]["hostname"]
    elif kind == "group":
        hosts[device]["groups"] = [*hosts[device].get("groups", []), "nosuch"]
    elif kind == "role":
        data["role"] = rng.choice(["spine", "leaf", "super_spine"])
    elif kind == "link":
        cabling = _load(inv, "cabling.yaml")
        links = cabling["links"]
        i = rng.randrange(len(links))
        if rng.random() < 0.5:
            del links[i]
        else:
            links[i] = [links[i][0], links[i][1].split(":")[0] + ":" + rng.choice(["swp61", "bogus", "Ethernet9/1"])]
        _dump(inv, "cabling.yaml", cabling)
        return f"link {i}"
    elif kind == "fabric mtu":
        fabric = _load(inv, "fabric.yaml")
        fabric.setdefault("mtu", {})["switch"] = rng.choice([9000, 9100, 9216])
        _dump(inv, "fabric.yaml", fabric)
        return kind
    else:
        name = rng.choice(sorted(pristine))
        (inv / name).write_text(pristine[name])
        return f"revert {name}"
    _dump(inv, "hosts.yaml", hosts)
    return f"{device} {kind}"


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_edits_say_what_a_cold_run_says(inventory_copy: Path, cache_dir: Path, both: Both, seed: int) -> None:
    """A sequence of random edits, one cache throughout: each run, cache on, equals a cold run (exit status, every
    line printed, every file written), for ``validate`` and for ``render --limit``."""
    rng = random.Random(seed)
    pristine = {p.name: p.read_text() for p in inventory_copy.glob("*.yaml")}
    both("leaf1,spine1,gpu01")
    done = []
    for _ in range(14):
        done.append(_random_edit(inventory_copy, pristine, rng))
        limit = rng.choice(["leaf1", "spine2,leaf3", "gpu02", "leaf*"])
        both(limit, done)


def test_an_edit_of_local_keys_reuses_the_entry_and_any_other_edit_makes_one(
    inventory_copy: Path, cache_dir: Path, both: Both
) -> None:
    both("leaf1")
    assert len(_entries(cache_dir)) == 1
    for device, mtu in (("leaf1", 9100), ("spine1", 9216), ("leaf3", 1500), ("gpu01", 4000), ("leaf1", None)):
        _set_mtu(inventory_copy, device, mtu)
        code, _out, err, _files = both("leaf1")
        assert len(_entries(cache_dir)) == 1, (device, mtu)  # the same key: nothing derived again
    assert code == 11 and "leaf3: host ports MTU 1500 < host MTU 9000" in err
    for device in ("leaf3", "spine1", "gpu01"):
        _set_mtu(inventory_copy, device, None)
    assert both("leaf1")[0] == 0
    assert len(_entries(cache_dir)) == 1
    hosts = _load(inventory_copy, "hosts.yaml")
    hosts["leaf1"]["data"].update(os_version="5.15.0", telemetry=True, ecmp_max_paths=32)  # other local keys
    _dump(inventory_copy, "hosts.yaml", hosts)
    both("leaf1")
    assert len(_entries(cache_dir)) == 1
    hosts["leaf1"]["hostname"] = "192.0.2.99"  # any other key of an entry is read by the topology or a reused check
    _dump(inventory_copy, "hosts.yaml", hosts)
    both("leaf1")
    assert len(_entries(cache_dir)) == 2


def test_a_device_set_aside_by_the_topology_is_set_aside_again(
    inventory_copy: Path, cache_dir: Path, both: Both
) -> None:
    """A misplaced role takes its device out of the model (``topology._misplaced_roles``): a reused entry does too."""
    hosts = _load(inventory_copy, "hosts.yaml")
    hosts["leaf1"]["data"]["role"] = "spine"
    _dump(inventory_copy, "hosts.yaml", hosts)
    code, _out, err, _files = both("leaf2")
    assert code == 11 and "role 'spine' fits none of the links of leaf1" in err
    for device, mtu in (("leaf1", 1500), ("leaf2", 9100), ("spine1", 9216)):
        _set_mtu(inventory_copy, device, mtu)
        both("leaf2")
    assert len(_entries(cache_dir)) == 1


def test_the_key_leaves_out_the_mtu_alone(inventory_copy: Path, cache_dir: Path) -> None:
    from fabconf.compile import inventory
    from fabconf.compile.problems import Problems

    def key() -> str | None:
        return derived.key(inventory.load(inventory_copy, Problems()))

    first = key()
    assert first is not None
    _set_mtu(inventory_copy, "leaf2", 9100)
    assert key() == first
    hosts = _load(inventory_copy, "hosts.yaml")
    hosts["leaf2"]["data"]["mtu_note"] = 1
    _dump(inventory_copy, "hosts.yaml", hosts)
    assert key() != first


@pytest.mark.parametrize("damage", ["cut short", "other shape", "unknown device", "garbage"])
def test_a_damaged_entry_is_not_taken(inventory_copy: Path, cache_dir: Path, both: Both, damage: str) -> None:
    both("leaf1")
    (entry,) = _entries(cache_dir)
    blob = entry.read_bytes()
    key, value = marshal.loads(blob[len(cache._FORMAT) :])
    switches = [(f"{row[0]}x", *row[1:]) for row in value[3]]
    entry.write_bytes(
        {
            "cut short": blob[: len(blob) // 2],
            "other shape": cache._FORMAT + marshal.dumps((key, (value[0], *[[("x",)]] * 11))),
            "unknown device": cache._FORMAT + marshal.dumps((key, (*value[:3], switches, *value[4:]))),
            "garbage": cache._FORMAT + os.urandom(64),
        }[damage]
    )
    _set_mtu(inventory_copy, "leaf2", 1500)
    assert both("leaf1")[0] == 11
    stored = cache.get("derived", key)
    assert isinstance(stored, tuple) and stored[3][0][0] in {"leaf1", "leaf2", "leaf3", "leaf4", "spine1"}
    assert entry.stat().st_mode & 0o077 == 0


def test_nothing_is_kept_with_the_cache_off(
    inventory_copy: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FABCONF_CACHE", "off")
    assert _run(["validate", "-i", str(inventory_copy)], capsys)[0] == 0
    assert not cache_dir.exists()


def test_no_more_than_most_entries_are_kept(
    inventory_copy: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each entry holds a whole fabric's topology (3.3 MB at 32k GPUs): only the ``MOST`` used last are kept."""
    hosts = _load(inventory_copy, "hosts.yaml")
    for i in range(derived.MOST + 2):
        hosts["leaf1"]["hostname"] = f"192.0.2.{200 + i}"
        _dump(inventory_copy, "hosts.yaml", hosts)
        assert main(["validate", "-i", str(inventory_copy)]) == 0
    capsys.readouterr()
    assert len(_entries(cache_dir)) == derived.MOST
    assert len(list(cache_dir.iterdir())) > derived.MOST  # the other kinds are trimmed by the cache's own count


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_the_local_keys_are_read_by_no_reused_code() -> None:
    """What the cache reuses across an edit of ``LOCAL_KEYS`` must not read them: the topology (but for the switch MTU,
    applied again) and the reused checks with the helpers of ``checks`` they call. A guard on the sources; the random
    edits above are the test of the outcome."""
    assert set(LOCAL_VALUES) | {"mtu"} == derived.LOCAL_KEYS
    for module in (topology, vlanplace):
        tree = ast.parse(inspect.getsource(module))
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name == "switch_mtu"):
                assert not _strings(node) & derived.LOCAL_KEYS, (module.__name__, getattr(node, "name", node))
    helpers = {n.name: n for n in ast.parse(inspect.getsource(checks)).body if isinstance(n, ast.FunctionDef)}
    todo, seen = [check.__name__ for check in derived.REUSED], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        assert not _strings(helpers[name]) & derived.LOCAL_KEYS, name
        todo += [n.id for n in ast.walk(helpers[name]) if isinstance(n, ast.Name) and n.id in helpers]
    assert {"check_unique", "_asn_source", "_check_card_declarations"} <= seen
