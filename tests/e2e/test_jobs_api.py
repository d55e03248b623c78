"""The jobs through the Python API against the lab, end to end: the same diff, push (with an approver that
declines, then one that approves), verify and drift (with remediation) the commands run, returning typed results
and printing no report. No mocks: the real drivers over real sockets."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from labkit import PASSWORD, inv, napalm_merge, running

import fabconf
from fabconf.deploy.drift import DriftState
from fabconf.deploy.job import Outcome, State
from fabconf.deploy.rollout import Plan
from fabconf_lab.orchestrator import Lab


@dataclass
class Answer:
    """An approver that says ``yes`` (or not), keeping what it was shown."""

    yes: bool
    shown: list[tuple[str, State]] = field(default_factory=list)
    waves: list[list[str]] = field(default_factory=list)

    def show(self, preview: list[Outcome], plan: Plan) -> None:
        self.shown = [(o.device, o.state) for o in preview]
        self.waves = [[j.name for j in wave] for wave in plan.waves]

    def ask(self) -> bool:
        return self.yes


def test_diff_push_verify_drift_as_functions(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    target = fabconf.Target(Path(inv(lab)), limit="leaf3")
    options = fabconf.DeviceOptions()
    pushing = fabconf.PushOptions(bgp_wait=10)

    result = fabconf.diff(target, options)
    assert result.exit_code == 2 and [(o.device, o.state) for o in result.outcomes] == [("leaf3", State.CHANGES)]

    before = running(lab, "leaf3")
    no = Answer(yes=False)
    result = fabconf.push(target, options, pushing, fabconf.Hooks(approve=no))
    assert result.declined and result.exit_code == 1 and result.outcomes == []
    assert no.shown == [("leaf3", State.CHANGES)] and no.waves == [["leaf3"]]
    assert running(lab, "leaf3") == before  # declined: nothing changed

    yes = Answer(yes=True)
    result = fabconf.push(target, options, pushing, fabconf.Hooks(approve=yes))
    assert result.previewed and not result.declined
    assert result.exit_code == 0, [(o.device, o.state, o.message) for o in result.outcomes]
    assert [o.state for o in result.outcomes] == [State.APPLIED]
    assert "priority-flow-control priority 3 no-drop" in running(lab, "leaf3")

    result = fabconf.verify(target, options, fabconf.VerifyOptions(bgp_wait=0))
    assert [(o.device, o.state) for o in result.outcomes] == [("leaf3", State.VERIFIED)] and result.exit_code == 0

    run = fabconf.drift(target, options, fabconf.DriftOptions())
    assert run.exit_code == 0 and [d.state for d in run.devices] == [DriftState.IN_SYNC]

    napalm_merge(lab, "leaf3", "eos", "interface Ethernet63/1\n   mtu 9000\n")  # out of band
    run = fabconf.drift(target, options, fabconf.DriftOptions(remediate=True, push=pushing))  # no approver: --yes
    assert run.remediation is not None and run.remediation.exit_code == 0
    assert run.exit_code == 0 and [d.state for d in run.devices] == [DriftState.IN_SYNC]  # checked again after
    assert run.devices[0].remediation is not None and run.devices[0].remediation.state is State.APPLIED

    out = capsys.readouterr()
    assert out.out == ""  # a job writes no report: its caller does
    assert PASSWORD not in out.err
