"""The ``nv`` command subset a simulated Cumulus switch answers over SSH (one command line in, text out).

Supported::

    nv set WORDS… ; nv unset WORDS…      # into the user's newest pending revision (created on demand)
    nv show [WORDS…] [-o json|yaml]       # applied config plus operational state
    nv config apply [REV|startup] [-y|--assume-yes] [--assume-no] [--confirm [TIME]] [-m MSG]
    nv config apply --confirm-yes        # [U] the confirming form; third-party automation uses it
    nv config apply --confirm-status
    nv config history [REV] ; nv config revision ; nv config save ; nv config detach
    nv config show [-r REV] [-o json|yaml|commands]
    nv config diff [BASE [TARGET]] [-o json|yaml|commands]
    nv config replace FILE.yaml          # FILE read from the simulator's state_dir (for the lab only)

Assumptions [U]:

- ``--confirm`` with no time arms 10 minutes; TIME is ``Ns``, ``Nm``, ``Nh`` or a bare number of minutes
  (the reference shows ``--confirm 60`` = 1 h and ``--confirm 60m``).
- ``nv config apply`` with no REV applies the newest pending revision of the logged-in user.
- Without ``-y`` an apply that needs a yes/no answer (qos changes) is answered "no", as a non-interactive
  session would be, and fails; other applies proceed.
- ``nv config diff`` with no argument compares ``applied`` with the newest pending revision; output
  ``-o commands`` gives ``nv unset``/``nv set`` lines, the default is YAML of ``- set:``/``- unset:``.
- Output wording imitates NVUE; it is not a byte-for-byte copy.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import yaml

from fabconf_lab.faults import Faults
from fabconf_lab.nvue import tree as nvue_tree
from fabconf_lab.nvue.revisions import ConfigStore, NvueError, parse_startup_yaml
from fabconf_lab.nvue.setcmd import set_patch, unset_paths
from fabconf_lab.nvue.tree import Tree

DEFAULT_CONFIRM_SECONDS = 600.0


def parse_duration(text: str) -> float:
    """``30s`` / ``5m`` / ``1h`` / bare minutes -> seconds. Raises ValueError."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", text.strip())
    if not match:
        raise ValueError(f"invalid time '{text}'")
    value, unit = float(match.group(1)), match.group(2) or "m"
    return value * {"s": 1, "m": 60, "h": 3600}[unit]


def _dump(tree: object, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(tree, indent=2) + "\n"
    return yaml.safe_dump(tree, sort_keys=False, default_flow_style=False)


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


class NvCli:
    """Interprets one command line for one logged-in user."""

    def __init__(
        self,
        store: ConfigStore,
        faults: Faults,
        user: str,
        state_dir: Path | None = None,
        operational: Callable[[], Tree] | None = None,
    ) -> None:
        self.store = store
        self.faults = faults
        self.user = user
        self.state_dir = state_dir
        self.operational = operational

    def run(self, line: str) -> tuple[str, int]:
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            return f"-bash: syntax error: {exc}\n", 2
        if not argv:
            return "", 0
        if argv[0] != "nv":
            return f"-bash: {argv[0]}: command not found\n", 127
        if argv[1:2] in (["set"], ["unset"], ["show"]):
            try:
                return {"set": self._set, "unset": self._unset, "show": self._nv_show}[argv[1]](argv[2:])
            except NvueError as exc:
                return f"Error: {exc.detail}\n", 1
            except ValueError as exc:
                return f"Error: {exc}\n", 1
        if argv[1:2] != ["config"] or len(argv) < 3:
            return f"Error: Invalid or unsupported command: {' '.join(argv)}\n", 1
        verb, args = argv[2], argv[3:]
        handler = {
            "apply": self._apply,
            "history": self._history,
            "revision": self._revision,
            "show": self._show,
            "diff": self._diff,
            "save": self._save,
            "detach": self._detach,
            "replace": self._replace,
        }.get(verb)
        if handler is None:
            return f"Error: Unknown config command '{verb}'\n", 1
        try:
            return handler(args)
        except NvueError as exc:
            return f"Error: {exc.detail}\n", 1
        except ValueError as exc:
            return f"Error: {exc}\n", 1

    # -- apply --------------------------------------------------------------------------------------
    def _apply(self, args: list[str]) -> tuple[str, int]:
        rev_ref: str | None = None
        assume_yes = False
        confirm: float | None = None
        message = ""
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-y", "--assume-yes"):
                assume_yes = True
            elif arg == "--assume-no":
                assume_yes = False
            elif arg == "--confirm-yes":
                rev_id = self.store.confirm_yes()
                return f"Revision {rev_id} confirmed.\n", 0
            elif arg == "--confirm-status":
                status = self.store.confirm_status()
                if status is None:
                    return "No pending confirmation.\n", 0
                return f"Revision {status[0]} is waiting for confirmation: {int(status[1] + 0.999)}s left.\n", 0
            elif arg == "--confirm":
                confirm = DEFAULT_CONFIRM_SECONDS
                if i + 1 < len(args) and re.fullmatch(r"\d+(\.\d+)?[smh]?", args[i + 1]):
                    confirm = parse_duration(args[i + 1])
                    i += 1
            elif arg.startswith("--confirm="):
                confirm = parse_duration(arg.split("=", 1)[1])
            elif arg in ("-m", "--message") and i + 1 < len(args):
                message = args[i + 1]
                i += 1
            elif arg.startswith("-"):
                raise ValueError(f"unknown option {arg}")
            else:
                rev_ref = arg
            i += 1
        if rev_ref is None:
            pending = self.store.latest_pending(self.user)
            if pending is None:
                return "Error: No pending configuration to apply; create a revision first.\n", 1
            rev_ref = pending.rev_id
        before = self.store.tree("applied")
        self.faults.on_commit()  # drop-on-commit: the connection closes, nothing is applied
        rev = self.store.apply(
            rev_ref, user=self.user, assume_yes=assume_yes, confirm_seconds=confirm, method="CLI", message=message
        )
        if rev.state in ("apply_fail", "ays_fail"):
            issues = "\n".join(f"  - {msg}" for msg in rev.issues)
            return f"Error: Revision {rev.rev_id} could not be applied ({rev.state}):\n{issues}\n", 1
        changes = nvue_tree.diff_lines(before, self.store.tree("applied"))
        out = "\n".join(changes) + ("\n" if changes else "")
        out += f"applied [rev_id: {rev.rev_id}]\n"
        if confirm is not None:
            out += f"Confirm with 'nv config apply --confirm-yes' within {int(confirm)}s or the change is reverted.\n"
        return out, 0

    # -- read-only views ---------------------------------------------------------------------------
    def _history(self, args: list[str]) -> tuple[str, int]:
        wanted = args[0] if args and not args[0].startswith("-") else None
        lines = []
        for entry in reversed(self.store.history):
            if wanted and entry.rev_id != wanted:
                continue
            lines.append(
                f"- apply-id: '{entry.rev_id}'\n  date: {_when(entry.when)}\n  user: {entry.user}\n"
                f"  method: {entry.method}\n  action: {entry.action}\n  message: {entry.message!r}"
            )
        return ("\n".join(lines) + "\n") if lines else "No history.\n", 0

    def _revision(self, args: list[str]) -> tuple[str, int]:
        rows = ["Rev ID  State               User      Created"]
        for rev in self.store.revisions.values():
            rows.append(f"{rev.rev_id:<7} {rev.state:<19} {rev.user:<9} {_when(rev.created)}")
        return "\n".join(rows) + "\n", 0

    @staticmethod
    def _opts(args: list[str]) -> tuple[dict[str, str], list[str]]:
        opts: dict[str, str] = {}
        rest: list[str] = []
        i = 0
        while i < len(args):
            if args[i] in ("-o", "--output", "-r", "--rev") and i + 1 < len(args):
                opts[args[i].lstrip("-")[0]] = args[i + 1]
                i += 2
                continue
            rest.append(args[i])
            i += 1
        return opts, rest

    def _show(self, args: list[str]) -> tuple[str, int]:
        opts, _ = self._opts(args)
        tree = self.store.tree(opts.get("r", "applied"))
        fmt = opts.get("o", "yaml")
        if fmt == "commands":
            return "\n".join(nvue_tree.set_lines(tree)) + "\n", 0
        return _dump(tree, fmt), 0

    def _diff(self, args: list[str]) -> tuple[str, int]:
        opts, refs = self._opts(args)
        if not refs:
            pending = self.store.latest_pending(self.user)
            refs = ["applied", pending.rev_id if pending else "applied"]
        elif len(refs) == 1:
            refs = ["applied", refs[0]]
        base, target = self.store.tree(refs[0]), self.store.tree(refs[1])
        fmt = opts.get("o", "yaml")
        if fmt == "commands":
            lines = nvue_tree.diff_lines(base, target)
            return ("\n".join(lines) + "\n") if lines else "", 0
        ops = nvue_tree.diff(base, target)
        return (_dump(ops, fmt) if ops else ("[]\n" if fmt == "json" else "")), 0

    # -- nv set / unset / show -----------------------------------------------------------------------
    def _pending_id(self) -> str:
        pending = self.store.latest_pending(self.user) or self.store.create(self.user)
        return pending.rev_id

    def _set(self, words: list[str]) -> tuple[str, int]:
        if not words:
            raise ValueError("nv set needs a path")
        patch = set_patch(self.store.validator, words)
        self.store.patch(self._pending_id(), [], patch)
        return "", 0

    def _unset(self, words: list[str]) -> tuple[str, int]:
        if not words:
            raise ValueError("nv unset needs a path")
        rev_id = self._pending_id()
        for parts in unset_paths(self.store.validator, words):
            self.store.delete(rev_id, parts)
        return "", 0

    def _nv_show(self, words: list[str]) -> tuple[str, int]:
        opts, path = self._opts(words)
        tree = self.operational() if self.operational is not None else self.store.tree("applied")
        try:
            node = nvue_tree.get_path(tree, path)
        except KeyError:
            return f"Error: The requested item does not exist: {' '.join(path)}\n", 1
        if not isinstance(node, dict | list):
            return f"{node}\n", 0
        return _dump(node, opts.get("o", "yaml")), 0

    # -- changes -------------------------------------------------------------------------------------
    def _save(self, args: list[str]) -> tuple[str, int]:
        self.store.save()
        return "saved [rev_id: applied]\n", 0

    def _detach(self, args: list[str]) -> tuple[str, int]:
        pending = self.store.latest_pending(self.user)
        if pending is not None:
            self.store.drop(pending.rev_id)
        return "", 0

    def _replace(self, args: list[str]) -> tuple[str, int]:
        if not args or self.state_dir is None:
            raise ValueError("nv config replace needs a FILE under the simulator's state directory")
        path = (self.state_dir / Path(args[0]).name).resolve()
        if not path.exists():
            raise ValueError(f"{args[0]}: no such file")
        pending = self.store.latest_pending(self.user) or self.store.create(self.user)
        self.store.replace(pending.rev_id, parse_startup_yaml(path.read_text()))
        return f"replaced [rev_id: {pending.rev_id}]\n", 0
