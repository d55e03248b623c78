"""The driver interface every platform presents to fabconf's steps: NAPALM's lifecycle and getters.

EOS and NX-OS use the unmodified NAPALM drivers; ``cumulus`` (NVUE REST) and ``linux`` (SSH to GPU hosts)
implement this class. Method names, arguments and return shapes follow ``napalm.base.NetworkDriver`` so
the diff/push/verify steps treat all four platforms alike.

Candidate semantics for our drivers: ``load_merge_candidate(config)`` takes the FULL rendered document
of the device (NVUE tree YAML, or the host's desired-state YAML) and stages only what fabconf owns
(see each driver's OWNED description); ``load_replace_candidate(config)`` stages the whole document as
the device's complete configuration.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from napalm.base.exceptions import (
    CommitConfirmException,
    CommitError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
)

__all__ = [
    "CommitConfirmException",
    "CommitError",
    "ConnectionException",
    "DriverBase",
    "MergeConfigException",
    "ReplaceConfigException",
]


class DriverBase(ABC):
    """A NAPALM-shaped driver. Subclasses keep ONE connection per device between open() and close()."""

    platform: str = ""

    def __init__(
        self,
        hostname: str,
        username: str,
        password: str,
        timeout: int = 60,
        optional_args: dict[str, Any] | None = None,
    ) -> None:
        self.hostname = hostname
        self.username = username
        self.password = password
        self.timeout = timeout
        self.optional_args = dict(optional_args or {})
        self.setup()

    def setup(self) -> None:  # noqa: B027 -- a hook with nothing to do by default, not an abstract method
        """A driver's own settings, read from ``self.optional_args`` (NAPALM's constructor is the same for every
        driver: subclasses override this, not ``__init__``)."""

    # -- connection --------------------------------------------------------------------------------
    @abstractmethod
    def open(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> DriverBase:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- configuration lifecycle ---------------------------------------------------------------------
    @abstractmethod
    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None: ...

    @abstractmethod
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None: ...

    @abstractmethod
    def compare_config(self) -> str:
        """A readable diff of the staged candidate against the running state; "" when nothing changes."""

    @abstractmethod
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Apply the candidate. With ``revert_in`` the device returns to its previous state by itself
        unless ``confirm_commit()`` follows within that many seconds (where the platform can)."""

    @abstractmethod
    def confirm_commit(self) -> None: ...

    @abstractmethod
    def has_pending_commit(self) -> bool: ...

    @abstractmethod
    def discard_config(self) -> None:
        """Drop the staged candidate; nothing is left on the device."""

    @abstractmethod
    def rollback(self) -> None:
        """Return to the configuration before the last commit."""

    # -- getters -------------------------------------------------------------------------------------
    @abstractmethod
    def get_facts(self) -> dict[str, Any]: ...

    @abstractmethod
    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False) -> dict[str, str]: ...

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        return {}

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        return {}

    def get_bgp_neighbors(self) -> dict[str, Any]:
        return {"global": {"router_id": "", "peers": {}}}
