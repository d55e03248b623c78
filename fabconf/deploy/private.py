"""Files only the operator may touch: one implementation, ``fabconf.private`` (the lab uses it too)."""

from fabconf.private import UnsafePath, open_private, private_dir

__all__ = ["UnsafePath", "open_private", "private_dir"]
