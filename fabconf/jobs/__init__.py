"""The jobs: diff, push, verify, drift, preflight and onboarding as functions with typed options and a typed
result. The CLI, the runbook runner, drift's remediation, bench and the Python API all call these; none of them
orchestrates a run itself, and nothing here imports the CLI (an import-linter contract holds both).

- ``fabconf.jobs.target``: ``Target`` (which devices, where), ``Hooks`` (progress, approval), ``prepare``.
- ``fabconf.jobs.diff``, ``.verify``, ``.push``: a ``Result`` (outcomes and exit status).
- ``fabconf.jobs.drift``: ``check`` -> ``DriftRun`` (with backups and remediation through ``push``).
- ``fabconf.jobs.preflight``: the checks, the bandwidth matrix, nccl-tests.
- ``fabconf.jobs.onboard``: a rack or a pod into the inventory, or a rack into Nautobot.
"""
