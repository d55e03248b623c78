"""The drift run as JUnit XML (built with ``junitparser``): one test suite, one test case per device.

A device in sync passes; a drifted one fails (``<failure type="drift">`` naming the sections, the unified diff
as its text); one that could not be checked is an error (``<error type="unreachable|failed">``). Unmanaged
changes go to the case's ``system-out``. CI systems show the drifted devices as failed tests.
"""

from __future__ import annotations

from junitparser import Error, Failure, JUnitXml, SystemOut, TestCase, TestSuite

from fabconf.cli.drift_report import DriftRun
from fabconf.deploy.drift import DeviceDrift, DriftState


def _case(d: DeviceDrift) -> TestCase:
    case = TestCase(name=d.device, classname=f"fabconf.drift.{d.role}.{d.platform}", time=round(d.outcome.seconds, 3))
    if d.state is DriftState.DRIFTED:
        failure = Failure(f"drifted: {', '.join(d.sections)}", "drift")
        failure.text = d.outcome.diff
        case.result = [failure]
    elif not d.state.checked:
        error = Error(d.outcome.message or str(d.state), str(d.state))
        case.result = [error]
    if d.unmanaged:
        case.append(SystemOut("unmanaged changes since the last backup:\n" + "\n".join(d.unmanaged) + "\n"))
    return case


def as_junit(run: DriftRun) -> str:
    suite = TestSuite("fabconf drift")
    suite.add_property("schema", "fabconf.report/1")
    suite.add_property("exit_code", str(run.exit_code))
    suite.add_testcases([_case(d) for d in run.devices])
    suite.time = round(run.duration, 3)
    root = JUnitXml("fabconf drift")
    root.add_testsuite(suite)
    body = root.tostring()
    text = body.decode("utf-8") if isinstance(body, bytes) else str(body)
    if not text.startswith("<?xml"):
        text = '<?xml version="1.0" encoding="utf-8"?>\n' + text
    return text.rstrip("\n") + "\n"
