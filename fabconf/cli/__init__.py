"""The ``fabconf`` command line: argument parsing into typed options, and the reports."""

from fabconf.cli.main import main

__all__ = ["main"]
