"""Benchmark: validate + design + render a synthetic fabric, against a bare Jinja2 loop.

    python bench/bench_compile.py [--hosts 4096] [--rails 8]

Prints one line per stage and the per-device render cost. Also runs the same at 1/8 of the size so
that a quadratic stage shows up as a ratio far above 8.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genfabric import generate

from fabconf import checks, inventory, model, schema, topology
from fabconf.design import design
from fabconf.problems import Problems
from fabconf.render import filename, render, templates_dir


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

        gc.disable()  # as fabconf.pipeline.compile_inventory does
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=4096)
    ap.add_argument("--rails", type=int, default=8)
    a = ap.parse_args()
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


if __name__ == "__main__":
    main()
