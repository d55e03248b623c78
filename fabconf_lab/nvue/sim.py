"""Simulated NVIDIA Cumulus Linux 5.x switch: the NVUE REST API on HTTPS 8765 plus ``nv`` over SSH 22.

REST (base ``/nvue_v1``, HTTP Basic auth or ``Authorization: Bearer`` from ``GET /nvue_v1/api-token``)::

    GET    /nvue_v1/api-token                      -> {"token": "<jwt>"}                       [U] reply shape
    POST   /nvue_v1/revision                       -> {"<id>": {"state": "pending", "transition": {...}}}
    GET    /nvue_v1/revision[/<id>]                -> all revisions / one revision
    PATCH  /nvue_v1/revision/<id>  {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}  -> "applying", then
           "applied" / "applied_and_saved" / "apply_fail" / "ays_fail" after ``apply_seconds``
    PATCH  /nvue_v1/revision/applied {"state": "save"}  -> startup := applied
    DELETE /nvue_v1/revision/<id>                  -> drop a pending revision (204)              [U]
    PATCH  /nvue_v1/[<path>]?rev=<id>  JSON        -> deep merge into the revision, answers the change (5.10+)
    DELETE /nvue_v1/[<path>]?rev=<id>              -> unset (204)
    GET    /nvue_v1/[<path>]?rev=<id>|applied|startup|empty[&diff=<other>][&filled=false]
    GET    /nvue_v1/[<path>]                       -> applied config plus operational leaves (link state,
                                                      LLDP neighbors, BGP session state; see nvue_oper)

Assumptions [U]: errors are JSON ``{"status", "title", "detail", "type"}``; ``?rev=A&diff=B`` answers the
changes that turn A into B as ``[{"unset": …}, {"set": …}]``; ``filled=true`` is accepted and answers the
same sparse tree (defaults are not filled in); a GET of a path that is not configured answers ``{}``
(except ``interface/<name>`` of an interface the box does not have: 404); PATCH bodies are checked
against the schema at once (400, like ``nv set`` refusing a value; turn off with
``patch_validation=False``) and the whole tree again, with semantic checks, at apply.

Commit-confirm: ``nv config apply --confirm`` exists on the CLI only, so this simulator runs the ``nv``
subset of ``fabconf_lab.nvue.cli`` over SSH (``fabconf_lab.sshd``); see that module and
``fabconf_lab.nvue.revisions`` for the confirm semantics.

Faults: ``reject PATTERN`` fails an apply whose ``nv set``/``nv unset`` lines (applied → revision) match;
``drop-on-commit`` closes the connection on the apply request (REST PATCH of the revision state, or the
CLI ``nv config apply``) before anything is applied; delay, hang and auth-refuse come from httpd/sshd.

Public API: ``NvueSim(name, address, *, ports, username, password, ca, world=None, state_dir=None,
faults=None, port=None (8765), startup_config=None (``default_startup_config``), ssh_port=22 (10022 without the
privilege to bind 22; None: no SSH), release="5.12", apply_seconds=0.2, patch_validation=True, validator=None)``;
``start()``, ``stop()``, ``lab_view()``, ``cli(line)`` (one ``nv`` command as the lab user), ``operational()``,
``store`` (``ConfigStore``: applied/startup trees, revisions, history). ``state_dir`` keeps
``nvue/<name>/startup.yaml`` (read back at construction, like a reboot) and the SSH host key.

Real routing: ``tests/lab/nvue_frr.py`` translates an applied tree into frr.conf / interfaces, and
``tests/lab/nvue_netns.py`` (``FrrFabric``) runs real FRR per switch in network namespaces from those trees;
they live next to the test that uses them, as the product never does.

Validation uses the PyPI package ``nvueschema`` (Pydantic models of NVIDIA's OpenAPI spec) when it
is installed, else a hand-written schema of the keys fabconf renders (``fabconf_lab.nvue.schema``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Unpack
from urllib.parse import unquote

from fabconf_lab.contract import SimArgs, SimBase
from fabconf_lab.httpd import HttpDevice, HttpReply, HttpRequest, HttpsService
from fabconf_lab.nvue import tree as nvue_tree
from fabconf_lab.nvue.cli import NvCli
from fabconf_lab.nvue.oper import MODEL, RELEASE, device_view, operational_tree
from fabconf_lab.nvue.revisions import NAMED, ConfigStore, NvueError
from fabconf_lab.nvue.schema import DEFAULT_RELEASE, Validator
from fabconf_lab.nvue.tree import Tree
from fabconf_lab.ports import VENDOR, default_port
from fabconf_lab.world import DeviceView

BASE = "/nvue_v1"
DEFAULT_PORT = 8765
TOKEN_SECONDS = 3600.0

__all__ = ["NvueSim", "default_startup_config"]


def ip_key(release: str) -> str:
    """The interface address block's key: ``ip`` before Cumulus 5.15, ``ipv4`` from then on."""
    major, minor = (int(x) for x in release.split(".")[:2])
    return "ipv4" if (major, minor) >= (5, 15) else "ip"


def _mgmt_port(release: str) -> Tree:
    """eth0 by DHCP in vrf mgmt. [V: nvueschema] 5.15 renamed an interface's ``ip`` to ``ipv4``, moved ``vrf`` up
    to the interface and DHCP to ``ipv4 dhcp-client``."""
    if ip_key(release) == "ipv4":
        return {"type": "eth", "vrf": "mgmt", "ipv4": {"dhcp-client": {"state": "enabled"}}}
    return {"type": "eth", "ip": {"address": {"dhcp": {}}, "vrf": "mgmt"}}


def _snmp_agent(hostname: str) -> Tree:
    """The operator's SNMP agent (the lab's switch metrics need one), listening on localhost with a read-only
    community [V: nvueschema 5.12 and 5.15 NvueConfigSystemSnmpServer: ``state`` is disabled by default]."""
    agent: Tree = {"listening-address": {"localhost": {}}, "readonly-community": {"lab-ro": {"access": {"any": {}}}}}
    return {"system": {"hostname": hostname, "snmp-server": {"state": "enabled", **agent}}}


def default_startup_config(hostname: str, ports: list[str], release: str = DEFAULT_RELEASE) -> Tree:
    """A plausible brownfield Cumulus 5.x tree: a switch someone set up by hand a while ago.

    Hostname, eth0 management by DHCP in vrf mgmt, every front-panel port as a plain swp (default MTU
    9216, not written), no ``qos roce``, a stale bridge VLAN 100 with an access port on the last port,
    an old description on the first port, an old ``trust l2`` QoS mapping and an SNMP agent.
    """
    interfaces: Tree = {
        "eth0": _mgmt_port(release),
        "lo": {"type": "loopback"},
    }
    for port in ports:
        interfaces[port] = {"type": "swp"}
    if ports:
        interfaces[ports[0]]["description"] = "old uplink - decom 2023"
        interfaces[ports[-1]]["bridge"] = {"domain": {"br_default": {"access": 100}}}
    return {
        **_snmp_agent(hostname),
        "interface": interfaces,
        "bridge": {"domain": {"br_default": {"vlan": {"100": {}}, "untagged": 1}}},
        "qos": {"mapping": {"default-global": {"trust": "l2"}}},
    }


class _JsonMemo:
    """The JSON of the last few trees a ``GET ?rev=`` answered, by the tree itself (``is``, not ``==``): a tree of
    ``ConfigStore.tree_now`` is never changed in place once made, so the same object has the same JSON. A diff
    GETs the applied tree and the candidate's twice each (load, then compare), and encoding them was a quarter
    of a Cumulus switch's CPU in a diff. Holding the trees keeps their ``id`` from being reused."""

    SIZE = 4

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, bytes]] = {}
        self._lock = threading.Lock()

    def encode(self, node: Any) -> bytes:
        with self._lock:
            hit = self._items.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        body = json.dumps(node).encode()  # as ``HttpReply.json``
        if isinstance(node, dict) and node:  # scalars and {} are cheap; a fresh {} for a missing path is not kept
            with self._lock:
                self._items.pop(id(node), None)
                self._items[id(node)] = (node, body)
                while len(self._items) > self.SIZE:
                    del self._items[next(iter(self._items))]
        return body


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _error(status: int, detail: str) -> HttpReply:
    title = HTTPStatus(status).phrase
    return HttpReply.json({"status": status, "title": title, "detail": detail, "type": "about:blank"}, status)


class NvueSim(SimBase, HttpDevice):
    """One Cumulus switch. See the module docstring for the protocol."""

    def __init__(
        self,
        name: str,
        address: str,
        *,
        port: int | None = None,
        startup_config: Tree | None = None,
        ssh_port: int | None = VENDOR,
        release: str = DEFAULT_RELEASE,
        apply_seconds: float = 0.2,
        patch_validation: bool = True,
        validator: Validator | None = None,
        **common: Unpack[SimArgs],
    ) -> None:
        super().__init__(name, address, **common)
        self.lab_state_dir = self.state_dir
        self.state_dir = self.lab_state_dir / "nvue" / name if self.lab_state_dir is not None else None
        self.port = port if port is not None else DEFAULT_PORT
        self.ssh_port = default_port(22) if ssh_port == VENDOR else ssh_port
        self.patch_validation = patch_validation
        if self.os_version:  # the schema of the release the inventory names (5.12.0 -> nvueschema 5.12)
            release = ".".join(self.os_version.split(".")[:2])
        self.release = release
        self.validator = validator if validator is not None else Validator(release)
        startup = startup_config if startup_config is not None else default_startup_config(name, self.ports, release)
        self._view_cache: tuple[Any, DeviceView] | None = None  # (the applied tree it was made of, the view)
        self._json_memo = _JsonMemo()
        self.store = ConfigStore(
            startup,
            ports=self.ports,
            validator=self.validator,
            faults=self.faults,
            state_dir=self.state_dir,
            apply_seconds=apply_seconds,
        )
        self._secret = secrets.token_bytes(32)
        self._booted = time.time()
        self.negotiated: dict[str, int] = {}  # port -> Gb/s its link came up at (a cable/optic fault)
        self.error_ratio: dict[str, float] = {}  # port -> share of received frames in error (a cable/optic fault)
        self.pfc_pauses: Callable[[], int] = lambda: 0  # PFC frames received so far (``lab fault DEV pfc-storm``)
        self._https: HttpsService | None = None
        self._ssh: Any = None
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        context = self.ca.server_context(self.name, self.address) if self.ca is not None else None
        self._https = HttpsService(self, self.address, self.port, context)
        # The handler class is made per device by httpd; without TCP_NODELAY the body written after the
        # headers waits for a delayed ACK (~40 ms per request). Until httpd sets it, set it for ours.
        self._https._server.RequestHandlerClass.disable_nagle_algorithm = True
        self.port = self._https.port
        self._https.start()
        if self.ssh_port is not None:
            from fabconf_lab.sshd import SshService  # imported late: only needed with SSH

            self._ssh = SshService(
                self.name,
                self.address,
                self.ssh_port,
                username=self.username,
                password=self.password,
                handler=self.cli,
                prompt=self.prompt,
                faults=self.faults,
                state_dir=self.lab_state_dir,
                moment=self.ssh_moment,
                refuse=lambda command: ("", "Error: Invalid or unsupported command\n", 1),
            )
            self._ssh.start()
            self.ssh_port = self._ssh.port
        if self.world is not None:
            self.world.register(self)

    def stop(self) -> None:
        if self.world is not None:
            self.world.unregister(self.name)
        self.store.stop()
        if self._ssh is not None:
            self._ssh.stop()
            self._ssh = None
        if self._https is not None:
            self._https.stop()
            self._https = None

    # -- views ----------------------------------------------------------------------------------------
    @property
    def hostname(self) -> str:
        return str((self.store.applied.get("system", {}) or {}).get("hostname") or self.name)

    def lab_view(self) -> DeviceView:
        """The view of the applied tree, worked out once per applied tree: the store replaces that tree on every
        apply and never changes it in place (``revisions.ConfigStore``), so the same object means the same view.
        The World asks every simulator for its view many times a second in a large lab (a deep copy of a
        spine's tree each time was a tenth of the switch worker's CPU at 2,048 devices)."""
        applied = self.store.applied
        cached = self._view_cache
        if cached is not None and cached[0] is applied:
            return cached[1]
        view = device_view(self.name, applied, self.ports)
        self._view_cache = (applied, view)
        return view

    def running_config(self) -> str:
        """The applied revision as JSON, keys sorted (what ``nv config show -o json`` prints)."""
        return json.dumps(self.store.tree("applied"), sort_keys=True, indent=2) + "\n"

    def prompt(self) -> str:
        return f"{self.username}@{self.hostname}:mgmt:~$ "

    def cli(self, command: str) -> tuple[str, int]:
        """One ``nv`` command line as the lab user (what SSH exec and shell lines run)."""
        return NvCli(self.store, self.faults, self.username, self.state_dir, self.operational).run(command)

    # -- step faults (fabconf_lab.faults) -------------------------------------------------------------------
    def _pending(self) -> bool:
        return self.store.confirm_status() is not None

    def moment_of(self, request: HttpRequest) -> str | None:
        """REST: an apply is the commit (the rollback while a confirm is pending), revisions and their edits are
        staging, reads are reads (verify while a confirm is pending); ``GET /system`` opens the driver."""
        pending = self._pending()
        path = request.path.rstrip("/")
        if request.method == "PATCH" and path.startswith(BASE + "/revision/"):
            return "rollback" if pending else "commit"
        if request.method == "GET" and (path.startswith(BASE + "/revision/") or path == BASE) and pending:
            return None  # the commit reading back the revision it applied and the applied tree
        named = request.query.get("rev") in (None, "applied", "startup", "operational")
        if request.method != "GET" or not named or path.startswith(BASE + "/revision"):
            return "verify" if pending else "stage"
        if path == BASE + "/system" and not pending:
            return "connect"
        return "verify" if pending else "read"

    def reject_reply(self, request: HttpRequest) -> HttpReply:
        return _error(400, "Invalid request: rejected by the switch")

    def ssh_moment(self, kind: str, command: str) -> str | None:
        words = command.split()
        if words[:3] != ["nv", "config", "apply"]:
            return "verify" if self._pending() else "read"
        if "--confirm-yes" in words:
            return "confirm"
        if "--confirm-no" in words:
            return "rollback"
        if "--confirm-status" in words:
            return "verify" if self._pending() else "read"
        return "rollback" if self._pending() else "commit"

    def operational(self, top: str | None = None, path: list[str] | None = None) -> Tree:
        """The applied tree plus operational state (what GET without ``rev`` and ``nv show`` print); ``top``: only
        that top-level key is needed; ``path``: the whole path asked for (``operational_tree``)."""
        applied = self.store.tree_now("applied")  # read only: operational_tree copies what it returns
        identity = (self.os_version or RELEASE, self.model or MODEL)
        return operational_tree(
            self.name,
            applied,
            self.ports,
            self.world,
            self._booted,
            time.time(),
            identity,
            self.negotiated,
            top,
            self.error_ratio,
            self.pfc_pauses(),
            path,
        )

    # -- tokens -----------------------------------------------------------------------------------------
    def issue_token(self, user: str) -> str:
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = _b64(json.dumps({"sub": user, "exp": int(time.time() + TOKEN_SECONDS)}).encode())
        sig = _b64(hmac.new(self._secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
        return f"{header}.{payload}.{sig}"

    def accept_token(self, token: str) -> str | None:
        try:
            header, payload, sig = token.split(".")
            want = _b64(hmac.new(self._secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
            if not hmac.compare_digest(want, sig):
                return None
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (ValueError, TypeError):
            return None
        if claims.get("exp", 0) < time.time():
            return None
        return str(claims.get("sub")) or None

    # -- HTTP -----------------------------------------------------------------------------------------
    def handle_http(self, request: HttpRequest) -> HttpReply:
        # lock-out [U]: the API is reached over eth0 in vrf mgmt; an applied tree without eth0 cuts it off
        if "eth0" not in (self.store.applied.get("interface", {}) or {}):
            return _error(503, "management interface eth0 is not configured")
        path = request.path
        if path != BASE and not path.startswith(BASE + "/"):
            return _error(404, f"No such resource: {path}")
        parts = [unquote(p) for p in nvue_tree.split_path(path[len(BASE) :])]
        try:
            if parts == ["api-token"] and request.method == "GET":
                return HttpReply.json({"token": self.issue_token(request.user)})
            if parts[:1] == ["revision"]:
                return self._revision(request, parts[1:])
            return self._config(request, parts)
        except NvueError as exc:
            return _error(exc.status, exc.detail)

    def _body(self, request: HttpRequest) -> Any:
        try:
            return request.json()
        except (ValueError, UnicodeDecodeError) as exc:
            raise NvueError(400, f"Request body is not valid JSON: {exc}") from exc

    def _revision(self, request: HttpRequest, rest: list[str]) -> HttpReply:
        method = request.method
        if not rest:
            if method == "POST":
                rev = self.store.create(request.user)
                return HttpReply.json({rev.rev_id: rev.as_json()})
            if method == "GET":
                return HttpReply.json({rid: rev.as_json() for rid, rev in self.store.revisions.items()})
            raise NvueError(405, f"{method} is not allowed on /revision")
        rev_id = "/".join(rest)
        if method == "GET":
            if rev_id in NAMED:
                return HttpReply.json({"state": rev_id, "transition": {"issue": {}, "progress": ""}})
            return HttpReply.json(self.store.get(rev_id).as_json())
        if method == "DELETE":
            self.store.drop(rev_id)
            return HttpReply(204)
        if method != "PATCH":
            raise NvueError(405, f"{method} is not allowed on /revision/{rev_id}")
        body = self._body(request)
        if not isinstance(body, dict) or "state" not in body:
            raise NvueError(400, "Body must be an object with a 'state'")
        state = body["state"]
        if state == "save":
            if rev_id != "applied":
                raise NvueError(400, "Only the 'applied' revision can be saved")
            self.store.save()
            return HttpReply.json({"state": "saved", "transition": {"issue": {}, "progress": ""}})
        if state != "apply":
            raise NvueError(400, f"Unsupported state '{state}': use 'apply' or 'save'")
        ays = (body.get("auto-prompt") or {}).get("ays") == "ays_yes"
        if rev_id != "startup":
            self.store.get(rev_id)  # 404 before the fault: a bad id is not a commit
        self.faults.on_commit()  # drop-on-commit: close the socket, apply nothing
        rev = self.store.apply(rev_id, user=request.user, assume_yes=ays, method="api", background=True)
        return HttpReply.json(rev.as_json())

    def _config(self, request: HttpRequest, parts: list[str]) -> HttpReply:
        method = request.method
        rev = request.query.get("rev")
        if method in ("PATCH", "DELETE"):
            if not rev:
                raise NvueError(400, "A 'rev' query parameter naming a pending revision is required")
            if method == "DELETE":
                self.store.delete(rev, parts)
                return HttpReply(204)
            change = self.store.patch(rev, parts, self._body(request), validate=self.patch_validation)
            return HttpReply.json(change)
        if method != "GET":
            raise NvueError(405, f"{method} is not allowed here")
        # read only from here: a revision's tree is not copied (``ConfigStore.tree_now``)
        tree = self.store.tree_now(rev) if rev else self.operational(parts[0] if parts else None, parts)
        other = request.query.get("diff")
        if other:
            return HttpReply.json(nvue_tree.diff(self._at(tree, parts), self._at(self.store.tree_now(other), parts)))
        if len(parts) >= 2 and parts[0] == "interface" and parts[1] not in self.ports:
            try:
                nvue_tree.get_path(tree, parts[:2])
            except KeyError:
                raise NvueError(404, f"The resource /interface/{parts[1]} was not found") from None
        node = self._at(tree, parts)
        if rev:  # a revision's tree (or a part of one) is never changed in place: its JSON is too
            return HttpReply(200, self._json_memo.encode(node))
        return HttpReply.json(node)

    @staticmethod
    def _at(tree: Tree, parts: list[str]) -> Any:
        try:
            return nvue_tree.get_path(tree, parts)
        except KeyError:
            return {}
