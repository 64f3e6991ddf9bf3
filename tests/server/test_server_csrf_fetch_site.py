"""A change another web site's page sends is refused by its `Sec-Fetch-Site`, even without an `Origin`.

Every current browser marks each request with where the page that sent it lives; no page can forge
the header. `cross-site` and `same-site` are pages of some other site (a sibling port or subdomain
is same-site), so their changes are refused as a foreign `Origin` is, unless they carry the table's
token. `same-origin` (the server's own pages) and `none` (the user typing the URL) stay allowed, and
a request without the header (curl, the CLI) is judged as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from fastapi.testclient import TestClient

from conftest import FakePipeline, FakeReader, FakeRules, make_settings
from dicecam.server.app import create_app
from dicecam.server.store import RollStore

ROLL = {"dice": ["d6:4", "d6:2"]}
TOKEN = "s3cret-token-for-tests"


def _client(tmp_path: Path, **settings) -> Iterator[tuple[TestClient, RollStore]]:
    s = make_settings(tmp_path, **settings)
    store = RollStore(s.db_path)
    app = create_app(s, store, pipeline=FakePipeline(), reader=FakeReader(), rules=FakeRules())
    with TestClient(app) as c:
        yield c, store
    store.close()


@pytest.fixture
def open_table(tmp_path: Path) -> Iterator[tuple[TestClient, RollStore]]:
    """A loopback server without a token: any local page could write, were it not for these checks."""
    yield from _client(tmp_path)


@pytest.fixture
def token_table(tmp_path: Path) -> Iterator[tuple[TestClient, RollStore]]:
    yield from _client(tmp_path, token=TOKEN)


@pytest.mark.parametrize("site", ["cross-site", "same-site", "Cross-Site"])
def test_a_roll_sent_from_another_sites_page_without_an_origin_is_refused_and_stores_nothing(open_table, site: str):
    client, store = open_table
    r = client.post("/api/rolls", json=ROLL, headers={"Sec-Fetch-Site": site})
    assert r.status_code == 403, r.text
    assert r.json() == {"detail": f"cross-site change refused (Sec-Fetch-Site: {site.lower()})"}
    assert store.count() == 0, "a refused change must not reach the store"


@pytest.mark.parametrize("site", ["same-origin", "none"])
def test_a_roll_from_the_servers_own_page_or_a_typed_url_is_stored(open_table, site: str):
    client, store = open_table
    r = client.post("/api/rolls", json=ROLL, headers={"Sec-Fetch-Site": site})
    assert r.status_code == 201, r.text
    assert store.count() == 1


def test_a_roll_without_the_header_is_stored_as_before(open_table):
    """curl, the CLI and browsers from before Fetch Metadata send no Sec-Fetch-Site."""
    client, store = open_table
    assert client.post("/api/rolls", json=ROLL).status_code == 201
    assert store.count() == 1


@pytest.mark.parametrize("how", ["bearer", "query"])
def test_a_cross_site_change_carrying_the_tables_token_is_allowed(token_table, how: str):
    client, store = token_table
    if how == "bearer":
        r = client.post("/api/rolls", json=ROLL, headers={"Sec-Fetch-Site": "cross-site", "Authorization": f"Bearer {TOKEN}"})
    else:
        r = client.post(f"/api/rolls?token={TOKEN}", json=ROLL, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 201, r.text
    assert store.count() == 1


@pytest.mark.parametrize("auth", [{}, {"Authorization": "Bearer wrong-token-1234"}])
def test_on_a_server_with_a_token_a_cross_site_change_without_the_right_one_is_refused_as_cross_site(
        token_table, auth: dict[str, str]):
    """Refused with the cross-site reason, before the token check's 401: the request is not the
    table's, whatever its credentials say."""
    client, store = token_table
    r = client.post("/api/rolls", json=ROLL, headers={"Sec-Fetch-Site": "cross-site", **auth})
    assert r.status_code == 403 and "cross-site change refused" in r.json()["detail"]
    assert store.count() == 0


def test_every_kind_of_change_is_refused_cross_site_and_the_table_is_unchanged(open_table):
    client, store = open_table
    cross = {"Sec-Fetch-Site": "cross-site"}
    config = client.get("/api/config").json()
    assert client.put("/api/config", json={"system": "sum", "options": {"target": 3}}, headers=cross).status_code == 403
    assert client.get("/api/config").json() == config
    assert client.put("/api/dice/names", json={"die": "d6:red", "name": "Lucky"}, headers=cross).status_code == 403
    assert client.get("/api/dice/names").json()["names"] == {}
    assert client.delete("/api/memory", headers=cross).status_code == 403
    assert client.patch("/api/rolls", json=ROLL, headers=cross).status_code == 403  # refused before routing
    assert store.count() == 0


def test_reading_stays_open_to_every_site(open_table):
    """A GET changes nothing: the overlay in a streaming tool or another site may read the rolls."""
    client, _ = open_table
    for path in ("/api/rolls", "/api/config", "/api/health"):
        r = client.get(path, headers={"Sec-Fetch-Site": "cross-site"})
        assert r.status_code == 200, (path, r.text)


def test_an_upload_from_another_sites_page_is_refused_before_it_is_read(open_table):
    client, store = open_table
    r = client.post("/api/read", files={"image": ("x.png", b"\x89PNG\r\n\x1a\n not read", "image/png")},
                    headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403 and "cross-site" in r.json()["detail"]
    assert store.count() == 0
