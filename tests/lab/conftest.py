"""The lab layer's shared fixture: ``lab``, a lab of the example started and stopped through the command line
(``labcli``); a module that needs another lab defines its own ``lab``, which takes precedence."""

from labcli import lab  # noqa: F401  (the fixture)
