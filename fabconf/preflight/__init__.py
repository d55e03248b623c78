"""``fabconf preflight``: read-only checks of what a training job needs from the cluster, in one report.

``policy`` (what the intent asks for: fabric.yaml ``preflight:``), ``hostparse`` (the host tools' formats),
``host`` (checks of one GPU host), ``switch`` (checks of one switch, through its getters), ``steps`` (one device:
read, check, an Outcome), ``fleet`` (checks across devices: firmware uniform across the fleet).
"""
