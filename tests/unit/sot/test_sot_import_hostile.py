"""``fabconf sot import`` against a real HTTP server on 127.0.0.1 (``nautobotfake``): what it takes from the source of
truth is the fabric's data, never how fabconf connects (issue #43); a hostile or broken server gets one line and
exit 1 -- timeouts, a page and size limit, the token to the server's own origin only and never shown."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml
from nautobotfake import TOKEN, FakeNautobot, endless, page, records, reply, stalled

from fabconf.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    target = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", target)
    return target


@pytest.fixture
def nautobot(inventory: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNautobot]:
    monkeypatch.setenv("FABCONF_NAUTOBOT_TOKEN", TOKEN)
    server = FakeNautobot(inventory)
    yield server
    server.close()


def sot_import(capsys: pytest.CaptureFixture[str], url: str, inventory: Path) -> tuple[int, str, str]:
    code = main(["sot", "import", "--from", url, "-i", str(inventory)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err and TOKEN not in out.out + out.err
    return code, out.out, out.err


def test_a_plain_import_works(nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = sot_import(capsys, nautobot.url, inventory)
    assert code == 0, err
    assert "imported" in out
    assert all(auth == f"Token {TOKEN}" for _path, auth in nautobot.seen)


def _device(server: FakeNautobot, name: str) -> dict:
    return next(d for d in server.lists["/api/dcim/devices/"] if d["name"] == name)


def test_how_to_connect_is_never_imported(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's attack: Nautobot's fabconf_extra gives leaf3 an impostor's address, plain HTTP, its own port and a
    CA file; the import keeps leaf3's primary address and the local file's own connection settings."""
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    own = {"napalm": {"port": 10443}}
    hosts["leaf3"]["connection_options"] = own
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    nautobot.lists = records(inventory)
    extra = _device(nautobot, "leaf3")["custom_fields"]["fabconf_extra"]
    extra["data"]["os_version"] = "4.33.1F"
    extra.update(
        hostname="203.0.113.66",
        port=8080,
        connection_options={
            "napalm": {"extras": {"optional_args": {"transport": "http"}, "ca_file": "/tmp/impostor-ca.pem"}}
        },
    )
    code, out, err = sot_import(capsys, nautobot.url, inventory)
    assert code == 0, err
    assert "how to connect ignored for leaf3" in out
    leaf3 = yaml.safe_load((inventory / "hosts.yaml").read_text())["leaf3"]
    assert leaf3["hostname"] == hosts["leaf3"]["hostname"]
    assert leaf3["connection_options"] == own and "port" not in leaf3
    assert leaf3["data"]["os_version"] == "4.33.1F"  # the fabric's data still comes in
    assert "impostor" not in (inventory / "hosts.yaml").read_text()


def _refused(code: int, out: str, err: str, *parts: str) -> None:
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fabconf: "), err
    for part in parts:
        assert part in lines[0], err


def _unchanged(inventory: Path) -> None:
    assert (inventory / "hosts.yaml").read_text() == (ROOT / "inventory" / "hosts.yaml").read_text()


def test_a_stalled_server_times_out(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fabconf.sot.http.READ_TIMEOUT", 0.5)  # the limit's size, not the code path
    nautobot.answers["/api/dcim/devices/"] = stalled(5)
    _refused(*sot_import(capsys, nautobot.url, inventory), nautobot.url, "did not answer in time")
    _unchanged(inventory)


def test_a_next_link_that_loops_is_refused(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    again = f"{nautobot.url}/api/dcim/devices/?limit=1&offset=1"
    nautobot.answers["/api/dcim/devices/"] = (200, page(nautobot.lists["/api/dcim/devices/"][:1], again))
    _refused(*sot_import(capsys, nautobot.url, inventory), "next links loop")
    assert len([p for p, _ in nautobot.seen if p.startswith("/api/dcim/devices/")]) < 10
    _unchanged(inventory)


def test_a_listing_without_end_stops_at_the_page_limit(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fabconf.sot.http.MAX_PAGES", 20)  # the limit's size, not the code path

    def onwards(handler: BaseHTTPRequestHandler) -> None:  # every page names a new next page
        offset = int(handler.path.rpartition("offset=")[2] or 0) + 1 if "offset=" in handler.path else 1
        reply(handler, 200, page([], f"{nautobot.url}/api/dcim/devices/?limit=1&offset={offset}"))

    nautobot.answers["/api/dcim/devices/"] = onwards
    _refused(*sot_import(capsys, nautobot.url, inventory), "more than 20 pages")
    assert len(nautobot.seen) < 30


def test_an_endless_answer_is_cut_at_the_size_limit(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nautobot.answers["/api/dcim/devices/"] = endless
    _refused(*sot_import(capsys, nautobot.url, inventory), "longer than the limit of 33554432 bytes")


def test_an_answer_announcing_too_much_is_not_read(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def huge(handler: BaseHTTPRequestHandler) -> None:
        reply(handler, 200, Content_Length=str(1 << 40))

    nautobot.answers["/api/dcim/devices/"] = huge
    _refused(*sot_import(capsys, nautobot.url, inventory), "over the limit")


@pytest.fixture
def thief() -> Iterator[FakeNautobot]:
    """Another server, which records every request (and its Authorization header) it gets."""
    server = FakeNautobot()
    yield server
    server.close()


@pytest.mark.parametrize("where", ["http://127.0.0.1:{port}", "http://localhost:{own}", "https://127.0.0.1:{own}"])
def test_the_token_goes_to_the_servers_own_origin_only(
    nautobot: FakeNautobot, thief: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    own = nautobot.url.rpartition(":")[2]
    elsewhere = where.format(port=thief.url.rpartition(":")[2], own=own) + "/api/dcim/devices/?offset=1"
    nautobot.answers["/api/dcim/devices/"] = (200, page(nautobot.lists["/api/dcim/devices/"], elsewhere))
    _refused(*sot_import(capsys, nautobot.url, inventory), "another server: refused")
    assert thief.seen == []


def test_a_redirect_is_not_followed(
    nautobot: FakeNautobot, thief: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nautobot.answers["/api/dcim/devices/"] = lambda handler: reply(
        handler, 302, Location=f"{thief.url}/api/dcim/devices/"
    )
    _refused(*sot_import(capsys, nautobot.url, inventory), "HTTP 302", "not followed")
    assert thief.seen == []


def test_an_error_that_echoes_the_token_is_redacted(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def echo(handler: BaseHTTPRequestHandler) -> None:
        reply(handler, 500, {"detail": f"bad header: {handler.headers.get('Authorization')}"})

    nautobot.answers["/api/dcim/devices/"] = echo
    code, out, err = sot_import(capsys, nautobot.url, inventory)  # asserts the token is nowhere
    _refused(code, out, err, "HTTP 500", "<redacted>")


def test_a_token_in_the_data_is_never_written(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _device(nautobot, "leaf3")["custom_fields"]["fabconf_extra"]["data"]["description"] = TOKEN
    _refused(*sot_import(capsys, nautobot.url, inventory))
    _unchanged(inventory)


DEVICES = "/api/dcim/devices/"
MALFORMED = [
    ("/api/status/", b"<html>not an API</html>"),
    ("/api/status/", []),
    ("/api/dcim/locations/", {"count": 1, "results": {"id": "x"}}),
    ("/api/dcim/locations/", {"count": 1, "next": "x", "results": [{"name": "pod1"}]}),
    ("/api/dcim/locations/", {"results": [{"id": "loc-1"}], "count": 1}),
    (DEVICES, page([1, 2, 3])),
    (DEVICES, page([{"id": "d1", "name": "leaf1", "role": "leaf"}])),
    (DEVICES, page([{"id": "d1", "name": "leaf1", "role": {"name": "leaf"}, "custom_fields": ["x"]}])),
    (DEVICES, page([{"name": "leaf1"}])),
    (DEVICES, b'{"count": 1, "next": null, "results": [{"id": '),
    (DEVICES, b"\xff\xfe{}"),
    ("/api/dcim/interfaces/", page([{"id": "i1", "name": "swp1"}])),
    ("/api/dcim/cables/", page([{"id": "c1", "termination_a_type": "dcim.interface"}])),
    ("/api/dcim/cables/", None),
]


@pytest.mark.parametrize(("path", "body"), MALFORMED)
def test_a_malformed_answer_is_one_line(
    nautobot: FakeNautobot, inventory: Path, capsys: pytest.CaptureFixture[str], path: str, body: object
) -> None:
    nautobot.answers[path] = (200, body)
    _refused(*sot_import(capsys, nautobot.url, inventory))
    _unchanged(inventory)
