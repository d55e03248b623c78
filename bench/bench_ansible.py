"""Benchmark: fabconf's render against Ansible's ``template`` on the same fabric, side by side (issue 42).

    python bench/bench_ansible.py [--devices 200] [--pairs 5] [--forks 20] [--cache DIR] [--keep DIR]

Installs ansible-core (pip, into a virtual environment of its own under ``--cache``, default
``~/.cache/fabconf-bench/ansible-core``; skips, saying why, when it cannot) and writes an Ansible project: an
inventory of the ``--devices`` devices of a genfabric fabric (2 rails), each device's data exactly as fabconf
designs it, dumped as its host_vars; a playbook that runs ``ansible.builtin.template`` with fabconf's own
templates (``templates/<platform>/device.j2``) for every device, ``connection: local``, ``gather_facts: false``;
and a filter plugin with fabconf's two template filters (``q``, ``comment``). Then, alternately (one pair after
another, the order swapped every pair), it runs ``ansible-playbook`` and a cold ``fabconf render``
(``FABCONF_CACHE=off``: validation, design and rendering from the inventory) of the same fabric, each into an
empty output directory, and measures each run's wall time and the CPU of its whole process tree (user + system,
children included, from ``getrusage(RUSAGE_CHILDREN)``). It compares the two outputs file by file and prints the
medians and the ratio of CPU. Last, one JSON line. Exit status 1 when a run failed or the outputs differ.
"""

from __future__ import annotations

import argparse
import datetime
import filecmp
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genfabric import fabric_size, generate

ROOT = Path(__file__).resolve().parent.parent
ANSIBLE = "ansible-core>=2.16"  # the template action's options used here (lstrip_blocks, trim_blocks) are older
RAILS = 2

# fabconf's two template filters, as fabconf.compile.render defines them, for Ansible's filter-plugin loader
FILTERS = """\
import json
import re

UNSAFE = re.compile("[\\x00-\\x1f\\x7f\\x85\\u2028\\u2029]")
COMMENT_MAX = 200


def _quote(value):
    if isinstance(value, str) and UNSAFE.search(value):
        raise ValueError(f"refusing to render {value!r}")
    return json.dumps(value)


def _comment(text, marker="#"):
    clean = UNSAFE.sub("?", str(text))
    if len(clean) > COMMENT_MAX:
        clean = clean[: COMMENT_MAX - 3] + "..."
    return f"{marker} {clean}"


class FilterModule:
    def filters(self):
        return {"q": _quote, "comment": _comment}
"""

PLAYBOOK = """\
- name: Render every device's configuration with fabconf's templates
  hosts: fabric
  connection: local
  gather_facts: false
  tasks:
    - name: Render the device
      ansible.builtin.template:
        src: fabconf.j2
        dest: "{{ fabconf_out }}/{{ inventory_hostname }}{{ fabconf_suffix[platform] }}"
        mode: "0644"
"""

# The entry template: fabconf's Environment settings as Ansible's template header, then the platform's own
# device.j2 unchanged. The header is needed for keep_trailing_newline, which the template action's options lack
# (without it every included template loses its last newline: `roce_tos: 106mlxconfig:`)
ENTRY = (
    "#jinja2: trim_blocks: True, lstrip_blocks: True, keep_trailing_newline: True\n"
    '{% include platform ~ "/device.j2" %}'
)


def hosts_for(devices: int) -> int:
    """The number of GPU hosts of the largest 2-rail genfabric fabric of at most ``devices`` devices."""
    best = 1
    for hosts in range(1, devices + 1):
        if sum(fabric_size(hosts, RAILS).values()) <= devices:
            best = hosts
    return best


def ansible_playbook(cache: Path) -> tuple[Path | None, str]:
    """``ansible-playbook`` of the cached virtual environment, installed there first when missing; or None and
    why not."""
    venv = cache / "ansible-core"
    exe = venv / "bin" / "ansible-playbook"
    if not exe.exists():
        print(f"installing {ANSIBLE} into {venv} ...", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
            subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", ANSIBLE], check=True, capture_output=True, timeout=900
            )
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            return None, f"cannot install {ANSIBLE} into {venv}: {exc} {detail.decode(errors='replace')[-400:]}"
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    if version.returncode != 0:
        return None, f"{exe} --version: exit {version.returncode}: {version.stderr.strip()[-400:]}"
    return exe, version.stdout.splitlines()[0]


def write_project(project: Path, data: dict[str, dict[str, Any]], forks: int, python: Path) -> None:
    """The Ansible project: inventory, host_vars (each device's designed data), playbook, config, filters."""
    from fabconf.compile.render import templates_dir
    from fabconf.platforms import platform as platform_spec

    (project / "host_vars").mkdir(parents=True)
    (project / "group_vars").mkdir()
    (project / "filter_plugins").mkdir()
    shutil.copytree(templates_dir(), project / "templates", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (project / "inventory.ini").write_text("[fabric]\n" + "".join(f"{name}\n" for name in data))
    for name, device in data.items():  # JSON is YAML, and the quickest of the two for Ansible to read
        (project / "host_vars" / f"{name}.json").write_text(json.dumps(device))
    suffixes = {d["platform"]: platform_spec(d["platform"]).suffix for d in data.values()}
    common = {
        "fabconf_out": str(project / "out"),
        "fabconf_suffix": suffixes,
        "ansible_python_interpreter": str(python),
    }
    (project / "group_vars" / "all.json").write_text(json.dumps(common))
    (project / "templates" / "fabconf.j2").write_text(ENTRY)
    (project / "filter_plugins" / "fabconf.py").write_text(FILTERS)
    (project / "site.yml").write_text(PLAYBOOK)
    (project / "ansible.cfg").write_text(
        "[defaults]\n"
        f"forks = {forks}\n"
        "gathering = explicit\n"
        "host_key_checking = False\n"
        "retry_files_enabled = False\n"
        "\n[connection]\npipelining = True\n"
    )


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the whole process tree) of one run, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {run.returncode}\n{run.stdout.decode()[-2000:]}{run.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def fresh(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()


def compare(ours: Path, theirs: Path) -> tuple[int, list[str]]:
    """How many files are byte for byte the same, and the names of those that differ or are missing."""
    names = sorted({p.name for p in ours.iterdir()} | {p.name for p in theirs.iterdir()})
    same, differ, _ = filecmp.cmpfiles(ours, theirs, names, shallow=False)
    return len(same), sorted(set(names) - set(same)) if differ or len(same) != len(names) else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=200, help="devices of the fabric (default 200)")
    parser.add_argument("--pairs", type=int, default=5, help="paired runs, after one warm-up pair (default 5)")
    parser.add_argument("--forks", type=int, default=20, help="Ansible's forks (default 20)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "fabconf-bench")
    parser.add_argument("--keep", type=Path, help="write the Ansible project here and keep it")
    args = parser.parse_args()

    exe, version = ansible_playbook(args.cache)
    if exe is None:
        print(f"SKIPPED: {version}")
        return 0
    from fabconf.compile.pipeline import compile_inventory

    scratch = tempfile.TemporaryDirectory(prefix="fabconf-bench-ansible-")
    work = Path(scratch.name)
    project = args.keep or work / "ansible"
    if project.exists():
        raise SystemExit(f"{project}: already exists")
    hosts = hosts_for(args.devices)
    size = generate(work / "inv", hosts, RAILS)
    data = compile_inventory(work / "inv").data
    write_project(project, data, args.forks, exe.parent / "python")
    ours, theirs = work / "fabconf-out", project / "out"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "FABCONF_"))}
    ansible_env = {
        **clean,
        "ANSIBLE_CONFIG": str(project / "ansible.cfg"),
        "ANSIBLE_HOME": str(project / ".ansible"),
        "ANSIBLE_LOCAL_TEMP": str(project / ".ansible" / "tmp"),
        "ANSIBLE_REMOTE_TEMP": str(project / ".ansible" / "remote-tmp"),
    }
    fabconf_env = {**clean, "FABCONF_CACHE": "off", "FABCONF_LOG": str(work / "fabconf.log")}
    runs: dict[str, tuple[list[str], dict[str, str], Path, Path]] = {
        "ansible": ([str(exe), "-i", "inventory.ini", "site.yml"], ansible_env, project, theirs),
        "fabconf": (
            [sys.executable, "-m", "fabconf", "render", "-i", str(work / "inv"), "-o", str(ours)],
            fabconf_env,
            work,
            ours,
        ),
    }
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, {version}")
    print(
        f"fabric: {size['spines']} spines, {size['leaves']} leaves, {size['hosts']} hosts: {len(data)} devices; "
        f"Ansible forks {args.forks}"
    )
    times: dict[str, list[tuple[float, float]]] = {"ansible": [], "fabconf": []}
    loads = []
    for pair in range(args.pairs + 1):  # pair 0 warms the file cache up and is not counted
        order = ["ansible", "fabconf"] if pair % 2 else ["fabconf", "ansible"]
        for name in order:
            argv, env, cwd, out = runs[name]
            fresh(out)
            result = timed(argv, env, cwd)
            if pair:
                times[name].append(result)
        loads.append(os.getloadavg()[0])
        if pair:
            a, f = times["ansible"][-1], times["fabconf"][-1]
            print(
                f"pair {pair}: ansible {a[1]:.2f} s CPU ({a[0]:.2f} s wall), fabconf {f[1]:.3f} s CPU "
                f"({f[0]:.3f} s wall): {a[1] / f[1]:.0f}x; load {loads[-1]:.2f}",
                flush=True,
            )
    same, wrong = compare(ours, theirs)
    medians = {
        name: {"wall_s": statistics.median(r[0] for r in rs), "cpu_s": statistics.median(r[1] for r in rs)}
        for name, rs in times.items()
    }
    ratio = medians["ansible"]["cpu_s"] / medians["fabconf"]["cpu_s"]
    pairwise = statistics.median(a[1] / f[1] for a, f in zip(times["ansible"], times["fabconf"], strict=True))
    print(f"{'':<8} {'CPU (s)':>8} {'wall (s)':>9}   medians of {args.pairs} pairs")
    for name, m in medians.items():
        print(f"{name:<8} {m['cpu_s']:>8.3f} {m['wall_s']:>9.3f}")
    print(f"CPU ratio ansible/fabconf: {ratio:.0f}x (median of the pairs' ratios {pairwise:.0f}x; target >= 300x)")
    print(f"outputs: {same} of {len(data)} files byte for byte the same" + (f"; differ: {wrong[:10]}" if wrong else ""))
    print(
        json.dumps(
            {
                "ansible": {"devices": len(data), "forks": args.forks, "version": version, **medians["ansible"]},
                "fabconf": medians["fabconf"],
                "ratio_cpu": round(ratio, 1),
                "ratio_cpu_pairwise": round(pairwise, 1),
                "identical_files": same,
                "load": [round(x, 2) for x in loads],
                "date": datetime.date.today().isoformat(),
            }
        )
    )
    if args.keep is None:
        scratch.cleanup()
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
