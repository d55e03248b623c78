"""Design, check and render the selected devices, then write them: on every usable core for a large fabric
(issue 42), with nothing written unless every device passed.

``prepare`` yields a ``Pending`` once every device is designed, rendered and its priority chain checked
(``fabconf.compile.checks.check_chain``); ``Pending.write`` then writes the files. A problem found by the check
raises ``InputError`` before any file is written, as ``compile_inventory`` does.

From ``parallel.THRESHOLD`` devices on, the devices are dealt round-robin to this process and one forked worker
per other core. Each designs and renders its share and sends back only each device's ``DeviceChain`` (a few
numbers: the device data and the texts stay where they were made); this process checks them all in name order,
then tells every worker to write its files, or to stop with nothing written. Below the threshold it all runs here.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from fabconf.compile import checks, parallel
from fabconf.compile.design.device import design, device_data
from fabconf.compile.model import Model
from fabconf.compile.parallel import OutputError, RenderError, cores, write_all
from fabconf.compile.problems import InputError, Problems
from fabconf.compile.topology import Topology
from fabconf.private import Unwritable, write_file

_BUG = "rendering failed in a worker process (a fabconf bug, please report): "


class Pending:
    """Devices designed, rendered and checked: ``write()`` writes them (``OutputError``: the files that could not
    be, each with why; every other file is written); ``count`` devices in all."""

    def __init__(self, count: int) -> None:
        self.count = count

    def write(self) -> None:
        raise NotImplementedError


class _Here(Pending):
    """A small run: device data designed here, rendered and written here when ``write`` is called."""

    def __init__(self, data: dict[str, dict[str, Any]], output: Path) -> None:
        super().__init__(len(data))
        self.data, self.output = data, output

    def write(self) -> None:
        write_all(self.data, self.output, workers=1)


class _Share:
    """One process's share of a large run: its devices designed and rendered, their chain views, and on ``write``
    the files (returns [(device, why)] of those not written)."""

    def __init__(self, model: Model, topo: Topology, names: list[str], output: Path) -> None:
        from fabconf.compile.render import filename, render

        dscp = model.fabric["roce"]["dscp"]
        self.views: dict[str, checks.DeviceChain] = {}
        self.files: list[tuple[str, Path, str]] = []
        self.error = ""
        try:
            for name in names:
                data = device_data(model.devices[name], model, topo)
                self.views[name] = checks.chain_view(data, dscp)
                self.files.append((name, output / filename(name, data["platform"]), render(data)))
        except Exception as exc:  # an exception type may not survive pickling: its text does
            self.error = "".join(traceback.format_exception_only(exc)).strip()

    def write(self) -> list[tuple[str, str]]:
        unwritten = []
        for name, path, text in self.files:
            try:
                write_file(path, text)
            except Unwritable as exc:  # the output directory, not fabconf: said as the file and the reason
                unwritten.append((name, str(exc)))
        return unwritten


def _worker(conn: Connection, model: Model, topo: Topology, names: list[str], output: Path) -> None:
    """A forked worker: design and render ``names``, send the views, write only when told to."""
    gc.disable()  # a short-lived process of millions of acyclic objects (see pipeline._no_cyclic_gc)
    share = _Share(model, topo, names, output)
    conn.send((share.views, share.error))
    if conn.recv():
        conn.send(share.write())
    conn.close()


class _Pool(Pending):
    """A large run: this process's share and the workers', every one designed, rendered and checked."""

    def __init__(self, own: _Share, workers: list[tuple[Any, Connection]], order: list[str]) -> None:
        super().__init__(len(order))
        self.own, self.workers, self.order = own, workers, order

    def write(self) -> None:
        unwritten = []
        for _process, conn in self.workers:
            conn.send(True)
        unwritten += self.own.write()
        for _process, conn in self.workers:
            unwritten += _receive(conn)
        if unwritten:
            index = {name: i for i, name in enumerate(self.order)}
            lines = [why for _name, why in sorted(unwritten, key=lambda u: index[u[0]])]
            raise OutputError("\n".join(lines) + f"\n{len(lines)} file(s) not written")


def _receive(conn: Connection) -> Any:
    try:
        return conn.recv()
    except EOFError:  # the worker died (killed, out of memory) before answering
        raise RenderError(_BUG + "a worker process ended without an answer") from None


def _designable(model: Model, topo: Topology, names: list[str]) -> list[str]:
    """``names`` as ``design`` takes them: sorted, each a device that resolved (a switch with a place in the
    topology)."""
    return [n for n in sorted(names) if n in model.devices and (model.devices[n].is_host or n in topo.switches)]


@contextmanager
def prepare(
    model: Model, topo: Topology, names: list[str], output: Path, problems: Problems, workers: int | None = None
) -> Iterator[Pending]:
    """Design, render and check ``names`` (the priority chain of every one of them, into ``problems``); raises
    ``InputError`` with ``problems`` when there is an error, before any file is written, and ``RenderError`` when a
    worker failed. Inside the ``with``, ``Pending.write()`` writes the files; leaving it unwritten writes none."""
    selected = _designable(model, topo, names)
    count = min(workers or cores(), len(selected))
    if count < 2 or len(selected) < parallel.THRESHOLD or not parallel.forkable():
        data = design(model, topo, selected)
        checks.check_device_data(model, topo, problems, data)
        if problems.errors:
            raise InputError(problems)
        yield _Here(data, output)
        return
    _warm_templates(model, selected)  # compiled once here, inherited by every worker
    context = multiprocessing.get_context("fork")
    started: list[tuple[Any, Connection]] = []
    try:
        for i in range(1, count):
            conn, theirs = context.Pipe()
            process = context.Process(target=_worker, args=(theirs, model, topo, selected[i::count], output))
            process.start()
            theirs.close()
            started.append((process, conn))
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            own = _Share(model, topo, selected[0::count], output)
        finally:
            if was_enabled:
                gc.enable()
        answers = [(own.views, own.error)] + [_receive(conn) for _process, conn in started]
        views = {name: view for share_views, _error in answers for name, view in share_views.items()}
        checks.check_chain(model, topo, problems, {name: views[name] for name in selected if name in views})
        if problems.errors:
            raise InputError(problems)
        errors = [error for _views, error in answers if error]
        if errors:
            raise RenderError(_BUG + errors[0])
        yield _Pool(own, started, selected)
    finally:
        for process, conn in started:
            with contextlib.suppress(OSError):  # a worker already writing, or gone, has no use for it
                conn.send(False)
            conn.close()
            process.join()


def _warm_templates(model: Model, names: list[str]) -> None:
    from fabconf.compile.render import entry_template

    for platform in sorted({model.devices[n].platform for n in names}):
        entry_template(platform)
