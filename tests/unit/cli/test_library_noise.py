"""Third-party libraries never print on the terminal: their log lines, and a traceback one of their threads dies
with, go to fabconf's log file (0600); fabconf's own thread errors are still shown."""

from __future__ import annotations

import logging
import stat
import threading
from pathlib import Path

import paramiko
import pytest

from fabconf.cli.main import quiet_libraries


def test_library_lines_and_thread_tracebacks_go_to_the_log_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "state" / "fabconf.log"
    monkeypatch.setenv("FABCONF_LOG", str(log))
    monkeypatch.delenv("FABCONF_DEBUG", raising=False)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)  # restored after the test
    quiet_libraries()
    logging.getLogger("pyeapi.eapilib").error("Socket error during eAPI connection: timed out")

    class Transport(paramiko.Transport):  # a thread of paramiko's, dying as its reader does on a reset socket
        def __init__(self) -> None:
            threading.Thread.__init__(self)

        def run(self) -> None:
            raise EOFError("peer reset the connection")

    Transport.__module__ = "paramiko.transport"
    dying = Transport()
    dying.start()
    dying.join()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    text = log.read_text()
    assert "Socket error during eAPI connection" in text and "EOFError: peer reset the connection" in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    for handler in logging.getLogger("paramiko").handlers:
        handler.close()


def test_the_log_file_is_opened_at_the_first_library_line_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a command whose libraries say nothing (render, validate) opens no log file (issue 42: 17-22 ms of each render)
    log = tmp_path / "state" / "fabconf.log"
    monkeypatch.setenv("FABCONF_LOG", str(log))
    monkeypatch.delenv("FABCONF_DEBUG", raising=False)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    quiet_libraries()
    logging.getLogger("paramiko").info("below the level: not written")
    assert not log.exists()
    logging.getLogger("netmiko").warning("first line")
    logging.getLogger("paramiko").error("second line")
    lines = log.read_text().splitlines()
    assert [line.split(" ", 5)[-1] for line in lines] == ["first line", "second line"]
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    for handler in logging.getLogger("paramiko").handlers:
        handler.close()


def test_an_unusable_log_file_drops_lines_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    log = tmp_path / "fabconf.log"
    log.symlink_to(target)  # never written through a link
    monkeypatch.setenv("FABCONF_LOG", str(log))
    monkeypatch.delenv("FABCONF_DEBUG", raising=False)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    quiet_libraries()
    logging.getLogger("paramiko").error("dropped")
    logging.getLogger("paramiko").error("dropped again")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "" and target.read_text() == ""
    for handler in logging.getLogger("paramiko").handlers:
        handler.close()
