"""Reports of check commands (``preflight``) in the formats the nightly tools use: JUnit XML (one test case per
device: a failure listing its failed checks, an error when it could not be checked) with ``junitparser``, and the
Prometheus text exposition with ``prometheus-client`` (per device and check, reachability, last run). Text and
JSON are ``fabconf.cli.report``'s, the shape ``verify`` and ``drift`` share (``schema: fabconf.report/1``)."""

from __future__ import annotations

import re
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite
from prometheus_client import CollectorRegistry, Gauge, generate_latest, write_to_textfile

from fabconf.deploy.job import Outcome, State
from fabconf.jobs.preflight import checked

CHECK = re.compile(r"^\[([a-z_-]+)\] ")


def failed_checks(outcome: Outcome) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in outcome.checks:
        match = CHECK.match(line)
        out.setdefault(match.group(1) if match else "other", []).append(line)
    return out


def as_junit(outcomes: list[Outcome], command: str, code: int, seconds: float) -> str:
    suite = TestSuite(f"fabconf {command}")
    suite.add_property("schema", "fabconf.report/1")
    suite.add_property("exit_code", str(code))
    for o in outcomes:
        case = TestCase(name=o.device, classname=f"fabconf.{command}.{o.platform}", time=round(o.seconds, 3))
        if not checked(o):
            case.result = [Error(o.message or str(o.state), str(o.state))]
        elif o.state is State.FAILED:
            failure = Failure(f"failed: {', '.join(sorted(failed_checks(o)))}", "check")
            failure.text = "\n".join(o.checks)
            case.result = [failure]
        suite.add_testcase(case)
    suite.time = round(seconds, 3)
    root = JUnitXml(f"fabconf {command}")
    root.add_testsuite(suite)
    body = root.tostring()
    text = body.decode("utf-8") if isinstance(body, bytes) else str(body)
    return text if text.startswith("<?xml") else '<?xml version="1.0" encoding="utf-8"?>\n' + text


def registry(outcomes: list[Outcome], command: str, code: int, started: float, seconds: float) -> CollectorRegistry:
    reg = CollectorRegistry()
    ok = Gauge(
        f"fabconf_{command}_passed", "1 when every check of the device passed", ["device", "platform"], registry=reg
    )
    reach = Gauge(f"fabconf_{command}_checked", "1 when the device could be checked", ["device"], registry=reg)
    fails = Gauge(
        f"fabconf_{command}_check_failures", "failed checks per device and check", ["device", "check"], registry=reg
    )
    for o in outcomes:
        reach.labels(o.device).set(1 if checked(o) else 0)
        if checked(o):
            ok.labels(o.device, o.platform).set(1 if o.state is State.VERIFIED else 0)
            for name, lines in failed_checks(o).items():
                fails.labels(o.device, name).set(len(lines))
    Gauge(f"fabconf_{command}_last_run_timestamp_seconds", "when the run started", registry=reg).set(started)
    Gauge(f"fabconf_{command}_duration_seconds", "how long the run took", registry=reg).set(seconds)
    Gauge(f"fabconf_{command}_exit_code", "the run's exit status", registry=reg).set(code)
    return reg


def as_prometheus(outcomes: list[Outcome], command: str, code: int, started: float, seconds: float) -> str:
    return generate_latest(registry(outcomes, command, code, started, seconds)).decode()


def write_prometheus(
    path: Path, outcomes: list[Outcome], command: str, code: int, started: float, seconds: float
) -> None:
    write_to_textfile(str(path), registry(outcomes, command, code, started, seconds))  # atomic: temp file + rename
