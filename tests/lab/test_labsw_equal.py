"""The switch simulators' cheaper algorithms against the ones they replaced, on random input: the same answers.

NVUE's ``merge``/``unset`` share untouched subtrees instead of deep-copying the whole tree; the CLI dialects
memoise ``single_key``/``opens``/``is_command``/``is_stored_negation``/``check_ranges``, the address checks and
EOS's ``value_error`` remember their answers; the HTTPS server parses plain header
blocks itself (anything else goes to ``http.client.parse_headers`` as before).
"""

from __future__ import annotations

import base64
import copy
import http.client
import io
import json
import random
import socket
from pathlib import Path
from typing import Any

import pytest
from network import free_network

from fabconf_lab.cliconf import EOS, NXOS, addresses, parse
from fabconf_lab.cliconf import core as cliconf_core
from fabconf_lab.eos import strict as eos_strict
from fabconf_lab.faults import Faults
from fabconf_lab.httpd import HttpDevice, HttpReply, HttpRequest, HttpsService, plain_headers, read_head
from fabconf_lab.nvue import tree as nvue_tree

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "devices"

KEYS = ["a", "b", "c", "1", "10", "swp1", "link", "state"]


def _old_merge(base: Any, patch: Any) -> Any:
    out = copy.deepcopy(base)
    _old_merge_into(out, patch)
    return out


def _old_merge_into(node: Any, patch: Any) -> None:
    if not isinstance(patch, dict):
        return
    for key, value in patch.items():
        key = str(key)
        if value is None:
            node.pop(key, None)
        elif isinstance(value, dict):
            child = node.get(key)
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            _old_merge_into(child, value)
        else:
            node[key] = copy.deepcopy(value)


def _old_unset(tree: Any, parts: list[str]) -> Any:
    if not parts:
        return {}
    out = copy.deepcopy(tree)
    node: Any = out
    for part in parts[:-1]:
        if not isinstance(node, dict) or part not in node:
            return out
        node = node[part]
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    return out


def _random_tree(rng: random.Random, depth: int, *, nulls: bool = False) -> Any:
    if depth == 0 or rng.random() < 0.25:
        pool: list[Any] = [rng.randint(0, 9), "on", "off", True, [1, 2], {}]
        if nulls:
            pool.append(None)
        return rng.choice(pool)
    return {rng.choice(KEYS): _random_tree(rng, depth - 1, nulls=nulls) for _ in range(rng.randint(0, 4))}


def _frozen(tree: Any) -> str:
    return json.dumps(tree, sort_keys=True)


def test_nvue_merge_and_unset_equal_the_deep_copying_ones_and_leave_their_input_alone() -> None:
    rng = random.Random(42)
    for _ in range(3000):
        base = _random_tree(rng, 4)
        if not isinstance(base, dict):
            base = {"x": base}
        patch = _random_tree(rng, 4, nulls=True)
        parts = [rng.choice(KEYS) for _ in range(rng.randint(0, 4))]
        before = _frozen(base)
        merged = nvue_tree.merge(base, patch)
        assert merged == _old_merge(base, patch)
        removed = nvue_tree.unset(base, parts)
        assert removed == _old_unset(base, parts)
        assert _frozen(base) == before  # the input tree is never changed
        # a chain of changes, as a revision sees them, ends where the deep-copying chain ends
        old, new = copy.deepcopy(base), base
        for _step in range(4):
            if rng.random() < 0.5:
                p = _random_tree(rng, 3, nulls=True)
                old, new = _old_merge(old, p), nvue_tree.merge(new, p)
            else:
                q = [rng.choice(KEYS) for _ in range(rng.randint(1, 3))]
                old, new = _old_unset(old, q), nvue_tree.unset(new, q)
            assert new == old
        assert _frozen(base) == before


def test_nvue_merge_copies_the_patch_values() -> None:
    value = [1, 2]
    merged = nvue_tree.merge({}, {"a": {"b": value}})
    assert merged["a"]["b"] == value and merged["a"]["b"] is not value


# -- CLI dialects ------------------------------------------------------------------------------------------------


NXOS_LINES = """\
hostname leaf5
feature bgp
feature lldp
interface Ethernet1/1
  description to spine1
  mtu 9216
  no switchport
  ip address 10.0.0.1/31
  priority-flow-control mode on
  service-policy type qos input ROCE
  shutdown
router bgp 65001
  router-id 10.0.0.1
  neighbor 10.0.0.0
    remote-as 65000
    address-family ipv4 unicast
  maximum-paths 64
""".splitlines()


def _lines() -> list[str]:
    """Every EOS golden line and some NX-OS ones, as entered and negated (the questions a push asks)."""
    texts = {line.strip() for line in NXOS_LINES}
    for path in sorted(GOLDEN.glob("*.cfg")):
        texts.update(line.strip() for line in path.read_text().splitlines())
    texts = {t for t in texts if t and not t.startswith("!")}
    return sorted(texts | {"no " + t for t in texts} | {"default " + t for t in texts})


@pytest.mark.parametrize("dialect", [EOS, NXOS], ids=["eos", "nxos"])
def test_dialect_answers_are_remembered_unchanged(dialect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _lines()
    assert len(lines) > 100
    modes = sorted({"root", *dialect.commands, *dialect.single_valued, *dialect.stored_negations})
    monkeypatch.setattr(cliconf_core, "_ANSWERS_MAX", 97)  # forget often: answers after a clear are the same
    rng = random.Random(7)
    for _ in range(4000):
        mode, text = rng.choice(modes), rng.choice(lines)
        uncached = (
            dialect._opens(mode, text),
            any(p.fullmatch(text) for p in dialect._get("commands", mode)),
            any(p.fullmatch(text) for p in dialect._get("stored_negations", mode)),
            dialect._single_key(mode, text),
            dialect._check_ranges("", text),
        )
        for _twice in range(2):
            got = (
                dialect.opens(mode, text),
                dialect.is_command(mode, text),
                dialect.is_stored_negation(mode, text),
                dialect.single_key(mode, text),
                dialect.check_ranges(text),
            )
            assert got == uncached, (mode, text)
    assert len(dialect._answers) <= 97


def _random_address(rng: random.Random) -> str:
    octets = [str(rng.choice([0, 1, 10, 127, 192, 224, 239, 240, 255, 256, rng.randint(0, 300)])) for _ in range(4)]
    text = ".".join(octets[: rng.choice([4, 4, 4, 3])])
    if rng.random() < 0.6:
        text += "/" + str(rng.choice([0, 4, 8, 24, 31, 32, 33, rng.randint(0, 40)]))
    return rng.choice([text, text, text + "x", " " + text, "fe80::1", ""])


def test_remembered_address_and_value_checks_answer_as_before() -> None:
    rng = random.Random(3)
    for _ in range(4000):
        addr = _random_address(rng)
        for check in (addresses.valid_ipv4, addresses.host_address_error, addresses.network_error):
            assert check(addr) == check.__wrapped__(addr), (check, addr)
            assert check(addr) == check.__wrapped__(addr), (check, addr)
        for strict in (True, False):
            expected = addresses.valid_prefix.__wrapped__(addr, strict)
            assert addresses.valid_prefix(addr, strict) == expected
        cmd = rng.choice(
            [
                f"ip address {addr}",
                f"router-id {addr}",
                f"neighbor {addr} remote-as 65000",
                f"network {addr}",
                f"maximum-paths {rng.randint(1, 9)} ecmp {rng.randint(1, 9)}",
                f"random-detect ecn minimum-threshold {rng.randint(1, 9)} kbytes maximum-threshold 5 kbytes",
            ]
        )
        assert eos_strict.value_error(cmd) == eos_strict.value_error.__wrapped__(cmd), cmd


def test_an_extended_dialect_forgets_the_answers_of_its_parent() -> None:
    line = "labsw-only-keyword 5"
    assert not EOS.is_command("root", line)
    extended = EOS.extend(commands={"root": (r"labsw-only-keyword \d+",)})
    assert extended.is_command("root", line) and not EOS.is_command("root", line)
    assert parse(f"{line}\n", extended).leaves() == [line]


# -- HTTP header blocks ------------------------------------------------------------------------------------------

_ODD = [
    b" folded continuation\r\n",
    b"\tfolded\r\n",
    b"Bare-LF: x\n",
    b"No colon here\r\n",
    b": no name\r\n",
    b"Latin: caf\xe9\r\n",
    b"Inner: a\rb\r\n",
    b"From someone\r\n",
    b"Sp ace: x\r\n",
    b"\n",
]


def _random_block(rng: random.Random) -> list[bytes]:
    lines = []
    for _ in range(rng.randint(0, 6)):
        if rng.random() < 0.15:
            lines.append(rng.choice(_ODD))
            continue
        name = rng.choice(["Host", "Authorization", "Content-Length", "X-Odd!#$%&'*+.^_`|~", "connection", "A;b"])
        value = "".join(rng.choice(["a", " ", "\t", ":", "Basic dTpw", "=", "0"]) for _ in range(rng.randint(0, 6)))
        lines.append(f"{name}:{value}\r\n".encode())
    lines.append(rng.choice([b"\r\n", b"\r\n", b"\n", b""]))
    return lines


def test_plain_header_blocks_read_as_http_client_reads_them() -> None:
    rng = random.Random(11)
    plain = 0
    for _ in range(3000):
        block = b"".join(_random_block(rng)) + b"BODY"
        lines = read_head(io.BytesIO(block))
        expected_fp = io.BytesIO(block)
        expected = http.client.parse_headers(expected_fp)
        assert b"".join(lines) == block[: expected_fp.tell()]  # the same lines read
        ours = plain_headers(lines)
        if ours is None:
            continue
        plain += 1
        assert ours.items() == expected.items()
        assert vars(ours) == vars(expected)
    assert plain > 500


class Echo(HttpDevice):
    name, username, password = "echo", "u", "p"

    def __init__(self) -> None:
        self.faults = Faults()

    def handle_http(self, request: HttpRequest) -> HttpReply:
        return HttpReply.json({"headers": request.headers, "body": request.body.decode()})


AUTH = "Authorization: Basic " + base64.b64encode(b"u:p").decode() + "\r\n"


def _exchange(address: str, port: int, raw: bytes) -> bytes:
    with socket.create_connection((address, port), timeout=5) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


@pytest.mark.parametrize(
    ("head", "expect"),
    [
        ("GET / HTTP/1.1\r\nHost: x\r\n" + AUTH + "Connection: close\r\n\r\n", b'"Connection": "close"'),
        ("GET / HTTP/1.1\r\nHost: x\r\n X-Folded: y\r\n" + AUTH + "\r\n", b'"Host": "x\\r\\n X-Folded: y"'),
        ("GET / HTTP/1.0\r\nHost: x\r\n" + AUTH + "\r\n", b'"Host": "x"'),
        ("GET / HTTP/1.1\r\n" + "X: y\r\n" * 101 + "\r\n", b"431 Too many headers"),
        ("GET / HTTP/1.1\r\nX: " + "y" * 70000 + "\r\n\r\n", b"431 Line too long"),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", b"505"),
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"401 Unauthorized"),
        (
            "POST / HTTP/1.1\r\nHost: x\r\n" + AUTH + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
            b'"body": "hi"',
        ),
    ],
)
def test_requests_plain_and_odd_are_answered_as_http_server_answers_them(head: str, expect: bytes) -> None:
    address = free_network().replace("0.0/16", "0.1")
    service = HttpsService(Echo(), address, 0, None)
    service.start()
    try:
        reply = _exchange(address, service.port, head.encode())
    finally:
        service.stop()
    assert expect in reply, reply[:300]
    if b"100-continue" in head.encode():
        assert reply.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200")
