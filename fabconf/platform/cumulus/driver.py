"""fabconf's NAPALM-shaped driver for NVIDIA Cumulus Linux 5.x (NVUE).

Transport, and why:

- **REST** (``https://<switch>:<port>/nvue_v1``, HTTP Basic auth, one kept-alive HTTPS connection between
  ``open()`` and ``close()``; ``nvue_client``) carries everything NVUE documents for its API: creating a
  revision, DELETE/PATCH into it, reading applied/startup/revision trees, applying a revision
  (``PATCH /revision/<id> {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`` then polling its
  state), re-applying an older revision to roll back, deleting a pending revision, and every getter.
- **SSH** (port ``ssh_port``, default 22; ``nvue_ssh``) is used only for commit-confirm, because NVUE
  documents ``--confirm`` for the CLI alone and no REST equivalent (reference §1.4, §8):
  ``commit_config(revert_in=N)`` runs ``nv config apply <rev> -y --confirm Ns``, ``confirm_commit()``
  runs ``nv config apply --confirm-yes`` [U: the confirming form is only known from third-party
  automation], ``has_pending_commit()`` reads ``nv config apply --confirm-status`` [U: its wording; we
  look for "waiting for confirmation", as the lab simulator prints]. The ``Ns`` time form is [U] too
  (the docs show ``60`` and ``60m``). The SSH session opens on first use and closes with ``close()``.

Candidates (see ``DriverBase``): the FULL rendered NVUE document of the device. ``load_merge_candidate``
stages only the paths fabconf owns (``nvue_plan.OWNED``): per owned path whose applied subtree differs,
a DELETE of the path then one root PATCH of the desired subtrees; equal paths are not sent; the staged
revision is read back and checked (owned paths equal the document, nothing else moved).
``load_replace_candidate`` unsets the revision's root and patches the whole document.

Rollback returns to the tree that was applied before this driver's last commit: by re-applying that
revision's id when this driver applied it (``nv config apply <rev>`` semantics over REST), else by
applying ``startup`` when startup still holds that tree (a revert_in commit is not auto-saved [U]),
else with a new revision holding that tree. A commit whose candidate changes nothing applies nothing.

Failures never leave a pending revision behind: a failed load, a refused or dropped apply deletes it.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabconf.drivers.base import (
    CommitConfirmException,
    CommitError,
    ConnectionException,
    DriverBase,
    MergeConfigException,
    ReplaceConfigException,
)
from fabconf.drivers.contract import CommitConflict, RevertTimer
from fabconf.drivers.textdiff import unified
from fabconf.platform.cumulus import getters as nvue_getters
from fabconf.platform.cumulus.client import NvueApiError, NvueConnectionLost, NvueRestClient, path_of, tls_context
from fabconf.platform.cumulus.plan import (
    DocumentError,
    Tree,
    copy_tree,
    diff_lines,
    keep_used_vlans,
    merge_plan,
    parse_document,
    same,
    sanitize,
    sort_tree,
    staged_problems,
    tree_yaml,
    unowned_paths,
)
from fabconf.platform.cumulus.ssh import NvSsh
from fabconf.platforms import platform as platform_spec

__all__ = ["CumulusDriver"]

log = logging.getLogger(__name__)

APPLIED_OK = frozenset({"applied", "applied_and_saved"})
APPLY_FAILED = frozenset({"apply_fail", "ays_fail", "confirm_fail", "invalid"})
APPLY_BODY = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
CONFIRM_PENDING_TEXT = "waiting for confirmation"  # [U] wording of `nv config apply --confirm-status`


@dataclass
class _Candidate:
    rev_id: str
    mode: str  # "merge" | "replace"


@dataclass
class _Commit:
    previous_id: str | None  # the revision applied before, when this driver applied it
    previous_tree: Tree
    rev_id: str | None  # None: the candidate changed nothing and was not applied


class CumulusDriver(DriverBase, RevertTimer):
    """NVIDIA Cumulus Linux 5.x over the NVUE REST API (+ the ``nv`` CLI over SSH for commit-confirm).

    ``optional_args``: ``port`` (8765), ``ssh_port`` (22; None disables SSH and so ``revert_in``),
    ``ca_file`` (a PEM bundle to verify the switch's certificate), ``verify`` (True),
    ``ssh_known_hosts`` (a known_hosts file, besides ``~/.ssh/known_hosts``: the SSH host key must be listed in
    one), ``ssh_strict`` (True; False accepts an unknown host key: ``--insecure`` only), ``poll_interval`` (0.1 s).
    """

    platform = "cumulus"

    def setup(self) -> None:
        args = self.optional_args
        self.port = int(args.get("port") or 8765)
        ssh_port = args.get("ssh_port", 22)
        self.ssh_port = int(ssh_port) if ssh_port is not None else None
        self.ca_file: str | None = args.get("ca_file")
        self.verify = bool(args.get("verify", True))
        self.known_hosts: str | None = args.get("ssh_known_hosts")
        self.ssh_strict = bool(args.get("ssh_strict", True))
        self.poll_interval = float(args.get("poll_interval", 0.1))
        self._rest: NvueRestClient | None = None
        self._ssh: NvSsh | None = None
        self._candidate: _Candidate | None = None
        self._last: _Commit | None = None
        self._applied: tuple[str, Tree] | None = None  # (revision id, tree) this driver last applied
        self._confirm_rev: str | None = None

    # -- connection ------------------------------------------------------------------------------------
    def open(self) -> None:
        rest = NvueRestClient(
            self.hostname,
            self.port,
            self.username,
            self.password,
            timeout=self.timeout,
            context=tls_context(self.ca_file, self.verify),
        )
        try:
            rest.connect()
            rest.get(path_of("system"), rev="applied", filled="false")  # proves the credentials
        except NvueApiError as exc:
            rest.close()
            raise ConnectionException(f"{rest.url} does not answer as an NVUE API: {exc}") from None
        except ConnectionException:
            rest.close()
            raise
        self._rest = rest

    def close(self) -> None:
        if self._candidate is not None and self._rest is not None:
            self._delete_revision(self._candidate.rev_id)
        self._candidate = None
        if self._ssh is not None:
            self._ssh.close()
            self._ssh = None
        if self._rest is not None:
            self._rest.close()
            self._rest = None

    def is_alive(self) -> dict[str, bool]:
        if self._rest is None:
            return {"is_alive": False}
        try:
            self._rest.get(path_of("system"), rev="applied", filled="false")
        except (ConnectionException, NvueApiError):
            return {"is_alive": False}
        return {"is_alive": True}

    @property
    def api(self) -> NvueRestClient:
        if self._rest is None:
            raise ConnectionException(f"{self.hostname}: the driver is not open; call open() first")
        return self._rest

    def _cli(self) -> NvSsh:
        if self.ssh_port is None:
            raise CommitError(f"{self.hostname}: commit-confirm needs the nv CLI over SSH, and ssh_port is None")
        if self._ssh is None:
            self._ssh = NvSsh(
                self.hostname,
                self.ssh_port,
                self.username,
                self.password,
                timeout=self.timeout,
                known_hosts=self.known_hosts,
                strict=self.ssh_strict,
            )
        return self._ssh

    @property
    def spec_management(self) -> tuple[str, ...]:
        return platform_spec("cumulus").management

    # -- trees and revisions ------------------------------------------------------------------------------
    def _tree(self, ref: str, *, filled: bool = False) -> Tree:
        """The whole configuration tree of ``applied``, ``startup`` or a revision id. [U] that a pending
        revision answers its full tree (applied at creation plus its changes), as the simulator does."""
        tree = self.api.get("/", rev=ref, filled="true" if filled else "false")
        return tree if isinstance(tree, dict) else {}

    def _create_revision(self, error: type[Exception] = CommitError) -> str:
        try:
            reply = self.api.request("POST", path_of("revision"))
        except NvueApiError as exc:
            raise error(f"{self.hostname}: the switch refused to create a revision: {exc.detail}") from None
        if not isinstance(reply, dict) or len(reply) != 1:
            raise NvueApiError(200, f"unexpected reply to POST /revision: {reply!r}", "POST", "/revision")
        (rev_id,) = reply
        return str(rev_id)

    def _revision(self, rev_id: str) -> dict[str, Any]:
        reply = self.api.get(path_of("revision", rev_id))
        return reply if isinstance(reply, dict) else {}

    def _delete_revision(self, rev_id: str) -> bool:
        """Delete a pending revision; False (logged) when the switch cannot be asked or refuses."""
        try:
            self.api.request("DELETE", path_of("revision", rev_id))
        except NvueApiError as exc:
            if exc.status == 404:
                return True
            if exc.status == 400:  # no longer pending (e.g. apply_fail): nothing pending is left behind
                log.debug("%s: revision %s not deleted: %s", self.hostname, rev_id, exc.detail)
                return False
            log.warning("%s: revision %s was not deleted: %s", self.hostname, rev_id, exc.detail)
            return False
        except ConnectionException as exc:
            log.warning("%s: revision %s was not deleted: %s", self.hostname, rev_id, exc)
            return False
        return True

    @staticmethod
    def _read(filename: str | None, config: str | None) -> str:
        if config is not None:
            return config
        if filename is not None:
            return Path(filename).read_text()
        raise ValueError("give filename or config")

    # -- loading ------------------------------------------------------------------------------------------
    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        try:
            doc = parse_document(self._read(filename, config))
        except DocumentError as exc:
            raise MergeConfigException(f"{self.hostname}: {exc}") from None
        unowned = unowned_paths(doc)
        if unowned:
            raise MergeConfigException(
                f"{self.hostname}: the document sets paths a merge does not own (extend nvue_plan.OWNED or use"
                f" replace): {', '.join(unowned)}"
            )
        self.discard_config()
        rev = self._create_revision(MergeConfigException)
        try:
            applied = self._tree("applied")
            doc = keep_used_vlans(doc, applied)
            plan = merge_plan(doc, applied)
            for path in plan.deletes:
                self.api.request("DELETE", path_of(*path), query={"rev": rev})
            if plan.patch:
                self.api.request("PATCH", "/", query={"rev": rev}, body=plan.patch)
            problems = staged_problems(doc, applied, self._tree(rev), plan)
            if problems:
                raise MergeConfigException(f"{self.hostname}: revision {rev} is not what was planned: {problems}")
        except NvueApiError as exc:
            self._delete_revision(rev)
            raise MergeConfigException(f"{self.hostname}: staging revision {rev} failed: {exc}") from None
        except (MergeConfigException, ConnectionException):
            self._delete_revision(rev)
            raise
        self._candidate = _Candidate(rev, "merge")
        log.info("%s: merge candidate in revision %s (%d owned paths differ)", self.hostname, rev, len(plan.changed))

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        try:
            doc = parse_document(self._read(filename, config))
        except DocumentError as exc:
            raise ReplaceConfigException(f"{self.hostname}: {exc}") from None
        self.discard_config()
        doc = _keep_management(doc, self._tree("applied"), self.spec_management)
        rev = self._create_revision(ReplaceConfigException)
        try:
            self.api.request("DELETE", "/", query={"rev": rev})
            if doc:
                self.api.request("PATCH", "/", query={"rev": rev}, body=doc)
            staged = self._tree(rev)
            if not same(staged, doc):
                lines = diff_lines(doc, staged)[:10]
                raise ReplaceConfigException(f"{self.hostname}: revision {rev} differs from the document: {lines}")
        except NvueApiError as exc:
            self._delete_revision(rev)
            raise ReplaceConfigException(f"{self.hostname}: staging revision {rev} failed: {exc}") from None
        except (ReplaceConfigException, ConnectionException):
            self._delete_revision(rev)
            raise
        self._candidate = _Candidate(rev, "replace")

    def compare_config(self) -> str:
        if self._candidate is None:
            return ""
        return "\n".join(diff_lines(self._tree("applied"), self._tree(self._candidate.rev_id)))

    def config_diff(self) -> str:
        """The NVUE tree as applied and as the candidate revision would make it (secrets masked, keys in
        natural order), as a unified diff: one changed leaf is one -/+ pair."""
        if self._candidate is None:
            return ""
        before = tree_yaml(sanitize(self._tree("applied")))
        after = tree_yaml(sanitize(self._tree(self._candidate.rev_id)))
        return unified(before, after, self.hostname)

    def discard_config(self) -> None:
        if self._candidate is not None:
            rev, self._candidate = self._candidate.rev_id, None
            self._delete_revision(rev)

    # -- commit ------------------------------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Apply the candidate revision: over REST, or with ``revert_in`` over SSH (``--confirm``).

        ``message`` goes to ``nv config apply -m`` on the CLI path only: no REST field for it is
        documented [U]. A candidate that changes nothing is deleted, not applied.
        """
        if self._candidate is None:
            raise CommitError(f"{self.hostname}: no candidate is loaded")
        if revert_in is not None and int(revert_in) <= 0:
            raise CommitError(f"{self.hostname}: revert_in must be a positive number of seconds")
        rev = self._candidate.rev_id
        try:
            before = self._tree("applied")  # also what rollback() returns to
            staged = self._tree(rev)
        except NvueApiError as exc:
            self.discard_config()
            raise CommitError(f"{self.hostname}: cannot read revision {rev} before applying it: {exc}") from None
        previous_id = self._applied[0] if self._applied and same(self._applied[1], before) else None
        self._candidate = None
        if same(before, staged):
            self._delete_revision(rev)
            self._last = _Commit(previous_id, before, None)
            log.info("%s: nothing to commit; revision %s deleted", self.hostname, rev)
            return
        # known before the apply: a commit whose outcome is lost can still be rolled back (also by a reattached driver)
        self._last = _Commit(previous_id, before, rev)
        self._confirm_rev = rev if revert_in is not None else None
        try:
            if revert_in is None:
                self._apply_rest(rev)
            else:
                self._apply_cli(rev, int(revert_in), message)
        except NvueConnectionLost as exc:
            self._after_lost_apply(rev, exc)
        except (CommitError, ConnectionException):
            self._delete_revision(rev)
            raise
        self._applied = (rev, self._tree("applied"))
        self._last = _Commit(previous_id, before, rev)
        self._confirm_rev = rev if revert_in is not None else None
        log.info("%s: revision %s applied%s", self.hostname, rev, f" (revert in {revert_in}s)" if revert_in else "")

    def _apply_rest(self, rev: str) -> None:
        try:
            self.api.request("PATCH", path_of("revision", rev), body=APPLY_BODY)
        except NvueApiError as exc:
            raise CommitError(f"{self.hostname}: the switch refused to apply revision {rev}: {exc.detail}") from None
        self._wait_applied(rev)

    def _wait_applied(self, rev: str) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            state = self._revision(rev)
            name = str(state.get("state", ""))
            if name in APPLIED_OK:
                return
            if name in APPLY_FAILED:
                raise CommitError(f"{self.hostname}: revision {rev} was not applied ({name}): {_issues(state)}")
            if time.monotonic() > deadline:
                raise CommitError(f"{self.hostname}: revision {rev} still '{name}' after {self.timeout}s")
            time.sleep(self.poll_interval)

    def _apply_cli(self, rev: str, revert_in: int, message: str) -> None:
        command = f"nv config apply {shlex.quote(rev)} -y --confirm {revert_in}s"  # [U] the 'Ns' form
        if message:
            command += f" -m {shlex.quote(message)}"
        output, status = self._cli().run(command)
        if status != 0:
            raise CommitError(f"{self.hostname}: revision {rev} was not applied: {output.strip()}")
        name = str(self._revision(rev).get("state", ""))
        if name not in APPLIED_OK:
            raise CommitError(f"{self.hostname}: revision {rev} is '{name}' after nv config apply: {output.strip()}")

    def _after_lost_apply(self, rev: str, lost: NvueConnectionLost) -> None:
        """The connection broke during the apply request: ask the switch what became of the revision."""
        try:
            state = self._revision(rev)
        except (ConnectionException, NvueApiError) as exc:
            raise ConnectionException(
                f"{lost}; the switch could not be asked afterwards ({exc}): revision {rev} may or may not be applied"
            ) from None
        name = str(state.get("state", ""))
        if name == "pending":
            gone = self._delete_revision(rev)
            raise CommitError(
                f"{lost}; the switch did not apply revision {rev} (still pending)"
                + ("; it was deleted, nothing changed" if gone else "; deleting it failed")
            )
        if name in APPLY_FAILED:
            raise CommitError(f"{lost}; revision {rev} was not applied ({name}): {_issues(state)}")
        log.warning("%s: %s; the apply went through nonetheless (%s)", self.hostname, lost, name)
        self._wait_applied(rev)

    def confirm_commit(self) -> None:
        """Confirm the commit made with ``revert_in`` (ours, or, as NAPALM's EOS driver does, whatever
        commit the switch reports as waiting when this driver made none)."""
        if self._confirm_rev is None:
            if self._last is not None and self._last.rev_id is None:
                return  # the last commit changed nothing: there is nothing to confirm
            if not self.has_pending_commit():
                raise CommitConfirmException(f"{self.hostname}: no commit is waiting for confirmation")
        rev, self._confirm_rev = self._confirm_rev or "pending", None
        output, status = self._cli().run("nv config apply --confirm-yes")
        if status != 0:
            raise CommitConfirmException(f"{self.hostname}: revision {rev} could not be confirmed: {output.strip()}")
        log.info("%s: revision %s confirmed", self.hostname, rev)

    def has_pending_commit(self) -> bool:
        if self.ssh_port is None:
            return False
        output, status = self._cli().run("nv config apply --confirm-status")
        if status != 0:
            raise CommitConfirmException(f"{self.hostname}: cannot read the confirm status: {output.strip()}")
        pending = CONFIRM_PENDING_TEXT in output.lower()
        if not pending and self._confirm_rev is not None:  # the revert timer fired: the switch reverted
            self._confirm_rev = None
            self._applied = None
        return pending

    def reattach(self, lost: Any) -> None:
        """Take over the commit a lost connection made (what rollback returns to, the pending confirm)."""
        if isinstance(lost, CumulusDriver):
            self._last, self._confirm_rev, self._applied = lost._last, lost._confirm_rev, lost._applied

    # -- what a killed run leaves (fabconf.deploy.leftovers) -------------------------------------------------
    def own_run(self, run: str) -> dict[str, str]:
        return {}  # NVUE numbers revisions itself: the committing record names the one a push applies

    def leftovers(self) -> dict[str, str]:
        return {"revision": self._candidate.rev_id} if self._candidate is not None else {}

    def clean_leftovers(self, recorded: list[dict[str, str]]) -> list[str]:
        """A revision a killed run staged and never applied is deleted; an apply it left waiting for its
        confirmation is confirmed, so that this push can stage and verify anew (NVUE documents no way to refuse a
        pending confirmation at once [U]; its timer would revert it). A confirmation pending for a revision no
        killed run recorded stops the push."""
        ours = {r["revision"]: r.get("run", "?") for r in recorded if r.get("revision")}
        done: list[str] = []
        for rev, run in ours.items():
            state = str(self._revision(rev).get("state", "")) if rev else ""
            if state == "pending" and self._delete_revision(rev):
                done.append(f"deleted revision {rev} that killed run {run} staged and never applied")
        if self.ssh_port is None or not self.has_pending_commit():
            return done
        output, _ = self._cli().run("nv config apply --confirm-status")
        named = re.findall(r"[Rr]evision (\S+)", output)  # the lab names the revision [U]; else the recorded one
        rev = named[0] if named else (list(ours)[-1] if ours else "")
        if rev not in ours:
            raise CommitConflict(f"an apply is waiting for confirmation, not recorded by fabconf: {output.strip()}")
        self._confirm_rev = rev
        self.confirm_commit()
        done.append(
            f"confirmed revision {rev} that killed run {ours[rev]} applied and left waiting for its confirmation; "
            "this push verifies the switch anew"
        )
        return done

    # -- rollback ------------------------------------------------------------------------------------------
    def rollback(self) -> None:
        last = self._last
        if last is None:
            raise CommitError(f"{self.hostname}: nothing to roll back: no commit was made since open()")
        target = last.previous_tree
        confirm_pending = self._confirm_rev is not None and self.has_pending_commit()
        if same(self._tree("applied"), target) and not confirm_pending:
            how = "already there"
        elif last.previous_id is not None:
            how = f"re-applied revision {last.previous_id}"
            self._apply_rest(last.previous_id)
        elif same(self._tree("startup"), target):
            how = "applied startup"
            self._apply_startup(target)
        else:
            if confirm_pending:  # a new revision cannot be applied while a confirm is pending [U]
                self.confirm_commit()
            how = "applied a revision holding the previous tree"
            self._apply_tree(target)
        after = self._tree("applied")
        if not same(after, target):
            raise CommitError(f"{self.hostname}: rollback ({how}) left differences: {diff_lines(target, after)[:10]}")
        self._confirm_rev = None
        self._last = None
        self._applied = (last.previous_id, after) if last.previous_id is not None else None
        log.info("%s: rolled back (%s)", self.hostname, how)

    def _apply_startup(self, target: Tree) -> None:
        """``nv config apply startup`` over REST; the reply names no revision, so wait for the tree."""
        try:
            self.api.request("PATCH", path_of("revision", "startup"), body=APPLY_BODY)
        except NvueApiError as exc:
            raise CommitError(f"{self.hostname}: the switch refused to apply startup: {exc.detail}") from None
        deadline = time.monotonic() + self.timeout
        while not same(self._tree("applied"), target):
            if time.monotonic() > deadline:
                raise CommitError(f"{self.hostname}: startup was not applied within {self.timeout}s")
            time.sleep(self.poll_interval)

    def _apply_tree(self, tree: Tree) -> None:
        rev = self._create_revision()
        try:
            self.api.request("DELETE", "/", query={"rev": rev})
            self.api.request("PATCH", "/", query={"rev": rev}, body=tree)
            self._apply_rest(rev)
        except NvueApiError as exc:
            self._delete_revision(rev)
            raise CommitError(f"{self.hostname}: staging the rollback revision {rev} failed: {exc}") from None
        except (CommitError, ConnectionException):
            self._delete_revision(rev)
            raise

    # -- getters --------------------------------------------------------------------------------------------
    def get_facts(self) -> dict[str, Any]:
        return nvue_getters.facts(
            _as_dict(self.api.get(path_of("system"))),
            _as_dict(self.api.get(path_of("platform"))),
            _as_dict(self.api.get(path_of("interface"))),
        )

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        return nvue_getters.interfaces(_as_dict(self.api.get(path_of("interface"))))

    def get_interfaces_counters(self) -> dict[str, dict[str, int]]:
        return nvue_getters.interfaces_counters(_as_dict(self.api.get(path_of("interface"))))

    def pfc_counters(self, ports: list[str]) -> dict[str, dict[str, int]]:
        """port -> switch priority -> PFC frames received so far (``nv show interface IF counters qos pfc-stats``,
        one GET per port; a port without them is left out)."""
        out = {}
        for port in ports:
            try:
                stats = self.api.get(path_of("interface", port, "counters", "qos", "pfc-stats"))
            except NvueApiError as exc:
                if exc.status == 404:
                    continue
                raise
            out[port] = nvue_getters.pfc_counters(_as_dict(stats), port)
        return out

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        return nvue_getters.lldp_neighbors(_as_dict(self.api.get(path_of("interface"))))

    def get_bgp_neighbors(self) -> dict[str, Any]:
        return nvue_getters.bgp_neighbors(
            _as_dict(self.api.get(path_of("router", "bgp"))), _as_dict(self.api.get(path_of("vrf")))
        )

    def adaptive_ports(self) -> list[str]:
        return nvue_getters.adaptive_ports(self._tree("applied"))

    def route_paths(self, prefix: str) -> list[str]:
        try:
            route = self.api.get(path_of("vrf", "default", "router", "rib", "ipv4", "route", prefix))
        except NvueApiError as exc:
            if exc.status == 404:
                return []
            raise
        return nvue_getters.route_paths(_as_dict(route))

    def get_config(
        self, retrieve: str = "all", full: bool = False, sanitized: bool = False, format: str = "text"
    ) -> dict[str, str]:
        """running = applied, startup = startup, candidate = the loaded revision; ``- set:`` YAML text
        (``format="json"``: JSON), keys in natural order. ``full`` asks for defaults (``filled=true``)."""
        if retrieve not in ("all", "running", "startup", "candidate"):
            raise ValueError(f"retrieve must be all, running, startup or candidate, not {retrieve!r}")
        if format not in ("text", "json"):
            raise ValueError(f"format must be text or json, not {format!r}")
        refs = {"running": "applied", "startup": "startup"}
        if self._candidate is not None:
            refs["candidate"] = self._candidate.rev_id
        out = {"running": "", "startup": "", "candidate": ""}
        for key, ref in refs.items():
            if retrieve not in ("all", key):
                continue
            tree = self._tree(ref, filled=full)
            if sanitized:
                tree = sanitize(tree)
            out[key] = tree_yaml(tree) if format == "text" else json.dumps(sort_tree(tree), indent=2) + "\n"
        return out


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _issues(state: dict[str, Any]) -> str:
    """The messages in a revision's ``transition.issue`` (``{"0": {"message": …}}`` [U] shape)."""
    issue = (state.get("transition") or {}).get("issue") or {}
    items = issue.values() if isinstance(issue, dict) else issue if isinstance(issue, list) else [issue]
    texts = [str(i.get("message") or i) if isinstance(i, dict) else str(i) for i in items]
    return "; ".join(texts) or "no reason given"


def _keep_management(doc: Tree, running: Tree, paths: tuple[str, ...]) -> Tree:
    """A replace keeps the management plane: each path of ``paths`` ("interface/eth0") that the document does not
    set is copied from the running tree, so the API, its users and eth0 survive."""
    out = copy_tree(doc)
    for path in paths:
        parts = path.split("/")
        src: Any = running
        for part in parts:
            src = src.get(part) if isinstance(src, dict) else None
        if src is None:
            continue
        dst = out
        for part in parts[:-1]:
            dst = dst.setdefault(part, {})
        dst.setdefault(parts[-1], copy_tree(src))
    return out
