"""The lab host shell keeps a batched script's statements by shape (``shparse.parse_script``): a script that
differs from an earlier one only by its framing marker runs from the statements parsed for the first, and prints
exactly what parsing it afresh prints."""

from __future__ import annotations

import re

import pytest

from fabconf_lab.host import shparse
from fabconf_lab.host.memfs import MemoryFs
from fabconf_lab.host.shell import Shell


def framed(marker: str, commands: list[str]) -> str:
    """A batch as a controller frames it (fabconf.platform.linux.ssh): a start line, each command's output, its
    status line and the next start line."""
    parts = [f"echo @@{marker}:0"]
    for i, command in enumerate(commands):
        start = f"\\n@@{marker}:{i + 1}" if i + 1 < len(commands) else ""
        parts.append(f"{command} 2>&1; printf '\\n@@{marker}:{i}:%s{start}\\n' $?")
    return "; ".join(parts)


COMMANDS = [
    "cat /etc/hostname",
    "cat /nope",
    "for x in a1 b2; do echo $x-@@MARK; done",
    "if [ -e /etc/hostname ]; then echo yes; else echo no; fi",
    "v=@@MARK; echo \"$v\" '@@MARK' x@@MARK",
    "echo one | cat",
    "cat <<EOF\nbody @@MARK $HOME\nEOF\n",  # last: the rest of the line is read after the here-document
]


def shell() -> Shell:
    return Shell(MemoryFs({"/etc/hostname": "gpu01\n"}))


def run(script: str) -> tuple[str, str, int]:
    out = shell().run(script)
    return out.stdout, out.stderr, out.status


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shparse, "_SHAPES", {})


@pytest.mark.parametrize("marker", ["0123456789ab", "ffffffffffff", "a0a0a0a0a0a0"])
def test_a_script_run_from_its_shape_prints_what_a_fresh_parse_prints(fresh: None, marker: str) -> None:
    def script(mark: str) -> str:
        return framed(mark, [c.replace("@@MARK", mark) for c in COMMANDS])

    first = run(script("0000aaaa1111"))  # parses and keeps the shape
    assert len(shparse._SHAPES) == 1
    kept = run(script(marker))  # the same shape: its statements are reused
    assert len(shparse._SHAPES) == 1
    shape = shparse.parse_script(script(marker))
    assert shape.statements is next(iter(shparse._SHAPES.values())) and shape.marker == marker
    assert f"@@{marker}:{len(COMMANDS) - 1}:0" in kept[0] and f"body {marker} /root" in kept[0]
    assert (
        f"{marker} {marker} x{marker}" in kept[0] and f"a1-{marker}" in kept[0] and shparse.PLACEHOLDER not in kept[0]
    )
    # the reference: the same script parsed afresh, no marker recognised
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shparse, "_MARKER", re.compile(r"(?!)"))
        assert run(script(marker)) == kept
        assert run(script("0000aaaa1111")) == first
    assert len(shparse._SHAPES) == 1


def test_the_hooks_and_loop_variables_see_the_script_as_written(fresh: None) -> None:
    seen: list[str] = []
    sh = shell()
    sh.around_pipeline = lambda text: seen.append(text)
    for marker in ("0123456789ab", "ba9876543210"):
        seen.clear()
        sh.run(f"echo @@{marker}:0; for v{marker} in 1; do echo $v{marker}; done; printf '@@{marker}:0:%s' $?")
        assert seen[0] == f"echo @@{marker}:0" and seen[-1] == f"printf @@{marker}:0:%s $?"
        assert sh.vars.get(f"v{marker}") == "1" and not any(shparse.PLACEHOLDER in k for k in sh.vars)


@pytest.mark.parametrize(
    "script",
    ["echo @@0123456789ab:0; if true; then echo", "echo @@0123456789ab:0 | | cat", "echo @@0123456789ab:0 'open"],
)
def test_a_broken_script_fails_as_it_always_did(fresh: None, script: str) -> None:
    _stdout, stderr, status = run(script)
    assert status == 2 and stderr.startswith("bash: ") and shparse.PLACEHOLDER not in stderr
    assert not shparse._SHAPES


def test_a_script_holding_the_placeholder_is_parsed_as_it_is(fresh: None) -> None:
    script = f"echo @@0123456789ab:0 {shparse.PLACEHOLDER}"
    assert run(script)[0] == f"@@0123456789ab:0 {shparse.PLACEHOLDER}\n"
    assert not shparse._SHAPES


def test_sessions_parsing_new_shapes_at_once_never_break_each_other(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lab process's SSH sessions parse in threads of their own. With the kept shapes full, each new shape makes
    room for itself while others do the same (a full-size push: each GPU host's commit is a shape of its own); a
    session whose parse raised died with its channel open, and fabconf waited out its timeout."""
    import sys
    import threading

    monkeypatch.setattr(shparse, "SHAPES_KEPT", 4)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def session(n: int) -> None:
        start.wait()
        try:
            for i in range(300):
                shparse.parse_script(framed(f"{n:06x}{i:06x}", [f"echo host{n}-{i}"]))
        except BaseException as exc:  # what killed a session's thread
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns every few bytecodes, as a busy lab's hundred sessions do
    try:
        threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, f"{len(errors)} session(s) broke: {errors[0]!r}"
    assert len(shparse._SHAPES) <= 4
