"""Benchmark: validate + design + render a synthetic fabric, against a bare Jinja2 loop.

    python bench/bench_compile.py [--hosts 4096] [--rails 8]

Prints one line per stage and the per-device render cost. Also runs the same at 1/8 of the size so
that a quadratic stage shows up as a ratio far above 8. Then the incremental case, as a user runs it (a new
`fabconf render` process each time, its compile cache in a directory of its own): a full render, the same
inventory rendered again with `--limit` one leaf, and that leaf changed (its MTU) and rendered with `--limit`.
Last, one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genfabric import generate

from fabconf.compile import checks, inventory, model, schema, topology
from fabconf.compile.design.device import design
from fabconf.compile.problems import Problems
from fabconf.compile.render import filename, render, templates_dir


def run(hosts: int, rails: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        size = generate(Path(tmp) / "inv", hosts, rails)
        out = Path(tmp) / "out"
        out.mkdir()
        problems = Problems()
        t: dict[str, float] = {}
        mark = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal mark
            now = time.perf_counter()
            t[name] = now - mark
            mark = now

        gc.disable()  # as fabconf.compile.pipeline.compile_inventory does
        raw = inventory.load(Path(tmp) / "inv", problems)
        lap("load yaml")
        schema.check_credentials(raw, problems)
        schema.check_files(raw, problems)
        lap("json schema")
        resolved = model.build(raw, problems)
        topo = topology.derive(resolved, problems)
        lap("model+topology")
        checks.run(resolved, topo, problems)
        lap("cross-checks")
        data = design(resolved, topo)
        checks.check_device_data(resolved, topo, problems, data)
        lap("design+chain")
        assert not problems.errors, [str(p) for p in problems.errors][:5]
        gc.enable()
        for name, d in data.items():
            (out / filename(name, d["platform"])).write_text(render(d))
        lap("render+write")
        # the bare loop: a plain Environment over the same templates and data, no fabconf code
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(templates_dir()),
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        env.filters["q"] = lambda v: __import__("json").dumps(v)
        env.filters["comment"] = lambda text, marker="#": f"{marker} {text}"  # the bare minimum, no escaping
        tmpl = {p: env.get_template(f"{p}/device.j2") for p in ("cumulus", "eos", "nxos", "linux")}
        mark = time.perf_counter()
        for d in data.values():
            tmpl[d["platform"]].render(d)
        lap("bare jinja2 loop")
        mark = time.perf_counter()
        for d in data.values():
            render(d)
        lap("fabconf render")
        t["devices"] = len(data)
        t.update({k: float(v) for k, v in size.items()})
        return t


def _render(inv: Path, out: Path, cache: Path, limit: str | None = None) -> float:
    """Seconds of one `fabconf render` process, start to exit, as a user waits for it."""
    argv = [sys.executable, "-m", "fabconf", "render", "-i", str(inv), "-o", str(out)]
    env = {**os.environ, "FABCONF_CACHE_DIR": str(cache)}
    env.pop("FABCONF_CACHE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv + (["--limit", limit] if limit else []), check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[wall] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall


CPU: dict[float, float] = {}  # a run's wall time -> its CPU (user + system, children included)


def incremental(hosts: int, rails: int, repeat: int = 3) -> dict[str, float]:
    """A one-leaf change: `fabconf render --limit LEAF` after a full render, unchanged and after the edit."""
    with tempfile.TemporaryDirectory() as tmp:
        inv, out, cache = Path(tmp) / "inv", Path(tmp) / "out", Path(tmp) / "cache"
        size = generate(inv, hosts, rails)
        leaf = f"leaf{max(int(size['leaves']) // 2, 1)}"
        t: dict[str, float] = {"full render (cold)": _render(inv, out, cache)}
        t["limit, first after the full render"] = _render(inv, out, cache, leaf)  # its outcome is not cached yet
        t["limit, unchanged"] = min(_render(inv, out, cache, leaf) for _ in range(repeat))
        hosts_file = inv / "hosts.yaml"
        text = hosts_file.read_text()
        start = text.index(f"\n{leaf}:\n")
        at = text.index("    id: ", start)
        at = text.index("\n", at) + 1
        rendered = sorted(out.glob(f"{leaf}.*"))
        before = rendered[0].read_text()
        times = []
        for i in range(repeat):  # a new edit each time: the changed file is never in the cache
            hosts_file.write_text(text[:at] + f"    mtu: {9100 + i}\n" + text[at:])
            times.append(_render(inv, out, cache, leaf))
        t["limit, one leaf changed"] = min(times)
        assert rendered[0].read_text() != before, "the edit did not reach the rendered leaf"
        t["leaf"] = float(leaf.removeprefix("leaf"))
        return t


def _print_incremental(inc: dict[str, float]) -> None:
    print(f"incremental, leaf{int(inc['leaf'])} (each a new `fabconf render` process, start to exit):")
    for case in (
        "full render (cold)",
        "limit, first after the full render",
        "limit, unchanged",
        "limit, one leaf changed",
    ):
        note = "   (target <= 0.5 s, issue 42)" if case in ("limit, unchanged", "limit, one leaf changed") else ""
        print(f"  {case:<36}{inc[case]:>7.2f} s  ({CPU[inc[case]]:.2f} s CPU){note}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--rails", type=int, default=8)
    ap.add_argument("--incremental-only", action="store_true", help="only the incremental case (no stage table)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each incremental case (the best is shown)")
    a = ap.parse_args()
    if a.incremental_only:
        _print_incremental(incremental(a.hosts, a.rails, a.repeat))
        return
    os.environ["FABCONF_CACHE"] = "off"  # the stages below are timed cold; the incremental case has its own cache
    small = run(max(a.hosts // 8, 32), a.rails)
    full = run(a.hosts, a.rails)
    stages = ["load yaml", "json schema", "model+topology", "cross-checks", "design+chain", "render+write"]
    print(
        f"fabric: {int(full['spines'])} spines, {int(full['leaves'])} leaves, {int(full['hosts'])} hosts "
        f"({int(full['gpus'])} GPUs), {int(full['links'])} links"
    )
    print(f"{'stage':<18}{'full (s)':>10}{'1/8 (s)':>10}{'ratio':>8}")
    for s in stages:
        print(f"{s:<18}{full[s]:>10.2f}{small[s]:>10.2f}{full[s] / max(small[s], 1e-9):>8.1f}")
    total = sum(full[s] for s in stages)
    print(f"{'total':<18}{total:>10.2f}   (target <= 20 s)")
    per = 1000 * full["fabconf render"] / full["devices"]
    bare = 1000 * full["bare jinja2 loop"] / full["devices"]
    print(
        f"render per device: {per:.3f} ms (target <= 5 ms); bare jinja2 loop {bare:.3f} ms; "
        f"ratio {per / bare:.2f} (target <= 2)"
    )
    inc = incremental(a.hosts, a.rails, a.repeat)
    _print_incremental(inc)
    result = {
        "devices": int(full["devices"]),
        "gpus": int(full["gpus"]),
        "stages_s": {s: round(full[s], 2) for s in stages},
        "total_s": round(total, 2),
        "render_ms_per_device": round(per, 3),
        "bare_jinja2_ms_per_device": round(bare, 3),
        "incremental_s": {k: round(v, 2) for k, v in inc.items() if k != "leaf"},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
