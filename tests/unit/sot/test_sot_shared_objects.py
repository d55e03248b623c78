"""Objects every fabric shares (custom fields, roles, platforms, device types) are created by whichever export
comes first: a second export running at once gets Nautobot's uniqueness refusal (HTTP 500 IntegrityError for a
custom field's key, 400 for a name), and must then use the object the first one made, not fail. The real race is
what `.ci/run`'s four workers hit on a fresh Nautobot; this pins the rule without one."""

from __future__ import annotations

import json
from typing import Any

import pynautobot
import pytest
import requests

from fabconf.sot.export import Exporter


def _refusal(status: int, body: dict[str, Any]) -> pynautobot.RequestError:
    response = requests.Response()
    response.status_code, response.reason = status, "Internal Server Error" if status == 500 else "Bad Request"
    response._content = json.dumps(body).encode()
    response.url = "http://127.0.0.1:8080/api/extras/custom-fields/"
    response.request = requests.Request("POST", response.url, data=b"{}").prepare()
    return pynautobot.RequestError(response)


class _Endpoint:
    """Nautobot's endpoint as another export left it: the object appears the moment ours is refused."""

    def __init__(self, refusal: pynautobot.RequestError, appears: bool) -> None:
        self.refusal, self.appears, self.objects = refusal, appears, []  # type: ignore[var-annotated]

    def create(self, payload: dict[str, Any]) -> Any:
        if self.appears:
            self.objects.append(payload)
        raise self.refusal


DUPLICATE_KEY = {"error": 'duplicate key value violates unique constraint "extras_customfield_slug_ed27c4fe_uniq"'}


@pytest.mark.parametrize(
    "refusal", [_refusal(500, DUPLICATE_KEY), _refusal(400, {"name": ["role with this name already exists."]})]
)
def test_an_object_another_export_created_meanwhile_is_used(refusal: pynautobot.RequestError) -> None:
    endpoint = _Endpoint(refusal, appears=True)
    record, created = Exporter._create_shared(endpoint, {"key": "fabconf_id"}, lambda: endpoint.objects)
    assert (record, created) == ({"key": "fabconf_id"}, False)


def test_a_refusal_with_nothing_created_meanwhile_is_raised() -> None:
    endpoint = _Endpoint(_refusal(400, {"model": ["This field is required."]}), appears=False)
    with pytest.raises(pynautobot.RequestError):
        Exporter._create_shared(endpoint, {"model": ""}, lambda: endpoint.objects)
