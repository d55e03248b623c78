"""The lab's defaults that the device commands' parsers show (``--state``, ``--network``): kept apart from
``fabconf.cli.lab`` so that building a parser (`fabconf diff --help`) does not import the lab's command module,
its daemon client and the compile pipeline (issue 42)."""

DEFAULT_STATE = ".fabconf-lab"
DEFAULT_NETWORK = "127.77.0.0/16"
NETWORK_ENV = "FABCONF_LAB_NETWORK"
NETWORK_HELP = (
    f"loopback range for the lab's device addresses, when the command starts the lab "
    f"(default: ${NETWORK_ENV}, else the one this state directory's lab last started on, else {DEFAULT_NETWORK})"
)
