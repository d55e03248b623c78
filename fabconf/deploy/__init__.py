"""The deploy half of fabconf: Nornir tasks over devices (diff, push, verify), their rollout in waves,
processors (progress, audit), locks and credentials. Nothing here names a platform: per-platform facts are
in ``fabconf.platforms`` and the drivers (``fabconf.drivers``).

Public API: ``fabconf.deploy.tasks`` (``diff_task``, ``verify_task``, ``push_task`` for ``nr.run``),
``fabconf.deploy.rollout`` (``plan``, ``diff``, ``verify``, ``push`` over prepared Jobs), the options in
``fabconf.deploy.options`` and the results in ``fabconf.deploy.job``.
"""
