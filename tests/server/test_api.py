"""The HTTP API (SPEC 11, 12, 15, W6, W7): through the ASGI client, and against a running server.

Every answer that is not a success has one JSON shape with a stable code; statuses say the
same thing (400/401/403/404/409/412/413/422)."""

from __future__ import annotations

import json
from typing import Any

import httpx2 as httpx
import pytest

from tests.conftest import fake
from tests.server.conftest import Live, Served


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    return dict(body["error"])


def test_anonymous_calls_get_401_in_the_error_shape(served: Served) -> None:
    c = served.client
    for method, path in [
        ("get", "/api/agents"),
        ("post", "/api/agents/ada/memory"),
        ("get", "/api/approvals"),
    ]:
        r = getattr(c, method)(path)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert error_of(r)["code"] == "unauthenticated"
    r = c.get("/api/agents", headers={"Authorization": "Bearer rvt_not-a-token"})
    assert r.status_code == 401
    r = c.get("/api/agents", headers=served.auth("ivy"))  # an inactive member's token
    assert r.status_code == 403 and error_of(r)["code"] == "inactive_member"
    assert c.get("/api/health").json()["status"] == "ok"


def test_a_revoked_token_stops_working(served: Served) -> None:
    [info] = served.rv.tokens_of("sam")
    assert served.client.get("/api/me", headers=served.auth("sam")).json() == {
        "name": "sam",
        "role": "member",
    }
    served.rv.revoke_token(info.id)
    assert served.client.get("/api/me", headers=served.auth("sam")).status_code == 401


def test_agents(served: Served) -> None:
    c, h = served.client, served.auth("sam")
    assert [a["name"] for a in c.get("/api/agents", headers=h).json()["agents"]] == ["ada", "open"]
    r = c.post(
        "/api/agents",
        headers=h,
        json={"name": "bo", "memory_framing": "advisory", "soul": "You are Bo."},
    )
    assert (
        r.status_code == 201
        and r.json()["creator"] == "sam"
        and r.json()["memory_framing"] == "advisory"
    )
    assert c.get("/api/agents/bo", headers=h).json()["name"] == "bo"
    r = c.post("/api/agents", headers=h, json={"name": "bo"})
    assert r.status_code == 400 and error_of(r)["code"] == "already_exists"
    r = c.post("/api/agents", headers=h, json={"name": "x", "edit_policy": "anyone"})
    assert r.status_code == 422 and error_of(r)["code"] == "invalid_request"
    r = c.get("/api/agents/nobody", headers=h)
    assert r.status_code == 404 and error_of(r)["code"] == "not_found"


def test_w6_w7_memory_writes_with_if_match_body_revision_and_idempotency_key(
    served: Served,
) -> None:
    c, h = served.client, served.auth("cy")
    r = c.get("/api/agents/ada/memory", headers=h)
    assert r.status_code == 200 and r.headers["etag"] == '"0"' and r.json()["revision"] == 0
    add = {"action": "add", "text": "We deploy on Tuesdays.", "section": "Decisions"}
    r = c.post(
        "/api/agents/ada/memory",
        headers={**h, "If-Match": r.headers["etag"], "Idempotency-Key": "req-1"},
        json=add,
    )
    assert r.status_code == 200 and r.json()["revision"] == 1 and r.json()["paths"] == ["MEMORY.md"]
    # The same key again: the same revision, nothing applied twice (W7).
    again = c.post(
        "/api/agents/ada/memory",
        headers={**h, "If-Match": '"0"', "Idempotency-Key": "req-1"},
        json=add,
    )
    assert again.json()["revision"] == 1 and again.json()["replayed"] is True
    # It says so in words too; a first write carries no such message.
    assert again.json()["message"].startswith("Already applied with this idempotency key")
    assert "nothing was written this time" in again.json()["message"]
    assert "message" not in r.json()
    reused = c.post(
        "/api/agents/ada/memory",
        headers={**h, "Idempotency-Key": "req-1"},
        json={"action": "add", "text": "x"},
    )
    assert reused.status_code == 400 and error_of(reused)["code"] == "idempotency_key_reused"
    # A stale expectation: 412 from If-Match, 409 from the body (W6), never merged.
    r = c.post(
        "/api/agents/ada/memory",
        headers={**h, "If-Match": '"0"'},
        json={"action": "add", "text": "x"},
    )
    assert r.status_code == 412 and error_of(r)["current_revision"] == 1
    r = c.post(
        "/api/agents/ada/memory",
        headers=h,
        json={"operations": [{"action": "add", "text": "x"}], "expected_revision": 0},
    )
    assert r.status_code == 409 and error_of(r)["code"] == "revision_conflict"
    r = c.post(
        "/api/agents/ada/memory",
        headers={**h, "If-Match": '"1"'},
        json={"action": "add", "text": "x", "expected_revision": 0},
    )
    assert r.status_code == 400
    r = c.post(
        "/api/agents/ada/memory",
        headers={**h, "If-Match": "yesterday"},
        json={"action": "add", "text": "x"},
    )
    assert r.status_code == 400
    assert c.get("/api/agents/ada/memory", headers=h).json()["revision"] == 1


def test_refused_content_says_what_the_core_says(served: Served) -> None:
    c, h = served.client, served.auth("cy")
    token = fake("xoxb-", "1234567890-", "abcdefghijklmnopqrstuvwx")
    r = c.post(
        "/api/agents/ada/memory", headers=h, json={"action": "add", "text": f"bot token {token}"}
    )
    assert r.status_code == 400
    err = error_of(r)
    assert err["code"] == "memory_credential_rejected" and token not in json.dumps(r.json())
    assert "keep secrets in typed settings" in err["message"]
    r = c.post(
        "/api/agents/ada/memory", headers=h, json={"action": "set_body", "text": "x" * 70_000}
    )
    assert r.status_code == 413 and error_of(r)["code"] == "memory_too_large"
    r = c.post("/api/agents/ada/memory", headers=h, json={"action": "remove", "old": "nowhere"})
    assert r.status_code == 400 and error_of(r)["code"] == "no_match"
    r = c.post("/api/agents/ada/memory", headers=h, json={"operations": []})
    assert r.status_code == 400 and error_of(r)["code"] == "invalid_operation"
    assert c.get("/api/agents/ada/memory", headers=h).json()["revision"] == 0  # nothing written


def test_m1_m3_read_history_diff_files_search(served: Served) -> None:
    c, h = served.client, served.auth("cy")
    c.post(
        "/api/agents/ada/memory",
        headers=h,
        json={
            "operations": [
                {"action": "add", "text": "We deploy on Tuesdays.", "section": "Decisions"},
                {
                    "action": "write_topic",
                    "topic": "deploys",
                    "content": "# Deploys\n- make release\n",
                },
            ]
        },
    )
    c.post(
        "/api/agents/ada/memory",
        headers=h,
        json={"action": "replace", "old": "Tuesdays", "text": "- We deploy on Thursdays."},
    )
    assert (
        "Tuesdays"
        in c.get("/api/agents/ada/memory", params={"revision": 1}, headers=h).json()["text"]
    )
    topic = c.get(
        "/api/agents/ada/memory", params={"source": "memory/deploys.md"}, headers=h
    ).json()
    assert topic["text"] == "# Deploys\n- make release\n"
    r = c.get("/api/agents/ada/memory", params={"source": "../etc/passwd"}, headers=h)
    assert r.status_code == 400 and error_of(r)["code"] == "invalid_path"
    assert c.get("/api/agents/ada/memory/files", headers=h).json()["files"] == [
        "MEMORY.md",
        "memory/deploys.md",
    ]
    revs = c.get("/api/agents/ada/memory/history", headers=h).json()["revisions"]
    assert [x["revision"] for x in revs] == [2, 1, 0] and revs[0]["writer"] == "api"
    assert revs[0]["time"].endswith("Z") and "T" in revs[0]["time"]
    one = c.get("/api/agents/ada/memory/history/2", headers=h).json()
    assert "+- We deploy on Thursdays." in one["diff"]
    diff = c.get("/api/agents/ada/memory/diff", params={"from": 0, "to": 2}, headers=h).json()
    assert "memory/deploys.md" in diff["diff"]
    r = c.get("/api/agents/ada/memory/history/9", headers=h)
    assert r.status_code == 404
    hits = c.get("/api/agents/ada/memory/search", params={"q": "deploy release"}, headers=h).json()[
        "results"
    ]
    assert {x["source"] for x in hits} == {"MEMORY.md", "memory/deploys.md"}
    r = c.get("/api/agents/ada/memory/search", params={"q": "x", "limit": 21}, headers=h)
    assert r.status_code == 422


def test_conversations_import_and_context_tools(served: Served) -> None:
    c = served.client
    records = [
        {
            "conversation": "c-1",
            "agent": "ada",
            "channel": {"kind": "dm", "id": "D1"},
            "author": "sam",
            "role": "user",
            "text": "We moved billing to Friday.",
            "time": "2026-11-30T10:00:00Z",
        },
        {
            "conversation": "c-1",
            "agent": "ada",
            "channel": {"kind": "dm", "id": "D1"},
            "author": "ada",
            "role": "assistant",
            "text": "Noted: billing runs on Fridays.",
            "time": "2026-11-30T10:01:00Z",
        },
    ]
    r = c.post("/api/conversations/import", headers=served.auth("sam"), json={"records": records})
    assert r.status_code == 403 and error_of(r)["code"] == "permission_denied"  # admins only
    r = c.post("/api/conversations/import", headers=served.auth("ann"), json={"records": records})
    assert r.json() == {"conversations": 1, "messages": 2, "closed": 0}
    bad = c.post(
        "/api/conversations/import",
        headers=served.auth("ann"),
        json={"records": [{"conversation": "c-2"}]},
    )
    assert bad.status_code == 400 and error_of(bad)["code"] == "invalid_import"
    h = served.auth("cy")
    assert [s["id"] for s in c.get("/api/agents/ada/sessions", headers=h).json()["sessions"]] == [
        "c-1"
    ]
    page = c.get("/api/conversations/c-1/messages", params={"start": 1}, headers=h).json()
    assert [m["text"] for m in page["messages"]] == ["Noted: billing runs on Fridays."]
    assert page["turns"] == []
    hits = c.get("/api/agents/ada/history/search", params={"q": "billing"}, headers=h).json()[
        "results"
    ]
    assert hits[0]["conversation"] == "c-1"
    assert c.get("/api/conversations/c-1/messages", headers=served.auth("sam")).status_code == 403
    assert c.get("/api/conversations/nope/messages", headers=h).status_code == 404


def test_soul_approvals_and_review(served: Served) -> None:
    rv, c = served.rv, served.client
    h = served.auth("cy")
    assert c.get("/api/agents/ada/soul", headers=h).json()["text"] == "You are Ada.\n"
    assert [
        v["version"] for v in c.get("/api/agents/ada/soul/versions", headers=h).json()["versions"]
    ] == [1]
    rv.ensure_channel("D-sam", "dm")
    conv = rv.create_conversation("ada", "D-sam").id
    a = rv.propose_instructions(conv, "Use metric units.", author="sam")
    b = rv.propose_instructions(conv, "Shout.", author="sam")
    listed = c.get("/api/approvals", headers=h).json()["approvals"]
    assert [x["id"] for x in listed] == [a.id, b.id] and listed[0]["agent"] == "ada"
    assert c.get("/api/approvals", headers=served.auth("sam")).json()["approvals"] == []
    r = c.post(f"/api/approvals/{a.id}/approve", headers=served.auth("sam"))
    assert r.status_code == 403
    r = c.post(f"/api/approvals/{a.id}/approve", headers=h)
    assert r.json()["state"] == "approved" and r.json()["applied_version"] == 1
    r = c.post(f"/api/approvals/{b.id}/comment", headers=h, json={"text": "Why?"})
    assert r.json()["state"] == "commented"
    r = c.post(f"/api/approvals/{b.id}/approve", headers=h)
    assert r.status_code == 400 and error_of(r)["code"] == "approval_decided"
    assert rv.channel_instructions("ada", "D-sam").text == "Use metric units."
    all_of_them = c.get("/api/approvals", params={"state": "all"}, headers=h).json()["approvals"]
    assert {x["state"] for x in all_of_them} == {"approved", "commented"}
    rv.append_message(conv, "user", "I prefer tea over coffee.", author="sam")
    rv.close_conversation(conv)
    report = c.post("/api/agents/ada/reviews", headers=h).json()["agents"][0]
    assert report["agent"] == "ada" and report["batches"] == 1
    batches = c.get("/api/agents/ada/reviews", headers=h).json()["batches"]
    assert batches[0]["ranges"][0][0] == conv


def test_openapi_is_served(served: Served) -> None:
    spec = served.client.get("/openapi.json").json()
    assert "/api/agents/{agent}/memory" in spec["paths"]
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_against_a_running_server(live: Live) -> None:
    h = {"Authorization": f"Bearer {live.tokens['cy']}"}
    with httpx.Client(base_url=live.base, timeout=10) as c:
        r = c.post(
            "/api/agents/ada/memory",
            headers={**h, "Idempotency-Key": "k"},
            json={"action": "add", "text": "Hello."},
        )
        assert r.status_code == 200 and r.json()["revision"] == 1
        assert c.get("/api/agents/ada/memory", headers=h).headers["etag"] == '"1"'
        assert c.get("/api/agents").status_code == 401
        r = c.get("/admin/agents/ada", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/admin/login"


@pytest.mark.parametrize("path", ["/api/agents/ada/memory", "/api/agents/ada/memory/history"])
def test_member_without_rights_is_refused(served: Served, path: str) -> None:
    r = served.client.get(path, headers=served.auth("sam"))
    assert r.status_code == 403 and error_of(r)["code"] == "permission_denied"


def test_a_request_body_is_bounded_and_an_anonymous_one_is_never_read(tmp_path: Any) -> None:
    """A body over twice the batch limit is refused 413 request_too_large, whether it says
    its length or streams it; an API call without credentials is refused 401 before its body
    is read; nothing is written."""
    from fastapi.testclient import TestClient

    from reverie import Reverie, Settings
    from reverie.http.app import create_app

    settings = Settings.load(tmp_path / "home", max_batch_bytes=64 * 1024)
    with Reverie(settings=settings, create=True) as rv:
        rv.add_member("olga", "owner")
        rv.create_agent("ada")
        auth = {"Authorization": f"Bearer {rv.create_token('olga')[0]}"}
        big = json.dumps({"action": "add", "text": "x" * 200_000}).encode()
        json_type = {"Content-Type": "application/json"}
        with TestClient(create_app(rv)) as c:
            said = c.post("/api/agents/ada/memory", content=big, headers={**auth, **json_type})
            assert said.status_code == 413 and error_of(said)["code"] == "request_too_large"

            def streamed() -> Any:
                yield big[:100_000]
                yield big[100_000:]

            r = c.post("/api/agents/ada/memory", content=streamed(), headers={**auth, **json_type})
            assert r.status_code == 413 and error_of(r)["code"] == "request_too_large"
            anonymous = c.post("/api/conversations/import", content=big, headers=json_type)
            assert anonymous.status_code == 401 and error_of(anonymous)["code"] == "unauthenticated"
            wrong = {"Authorization": "Bearer rvt_works-for-no-one", **json_type}
            r = c.post("/api/conversations/import", content=b"{not json", headers=wrong)
            assert r.status_code == 401 and error_of(r)["code"] == "unauthenticated"
            small = c.post(
                "/api/agents/ada/memory",
                json={"action": "add", "text": "We deploy on Tuesdays", "section": "Decisions"},
                headers=auth,
            )
            assert small.status_code == 200
        assert rv.memory_read("ada").revision == 1


def test_w6_an_expected_revision_is_a_json_number(served: Served) -> None:
    """``true`` and ``"0"`` are no revision: 422, nothing written."""
    for revision in (True, "0", 0.0):
        r = served.client.post(
            "/api/agents/ada/memory",
            json={
                "action": "add",
                "text": "x",
                "section": "Decisions",
                "expected_revision": revision,
            },
            headers=served.auth("cy"),
        )
        assert r.status_code == 422 and error_of(r)["code"] == "invalid_request", revision
    assert served.rv.memory_read("ada").revision == 0


def test_a_field_the_caller_made_up_is_echoed_short_and_never_a_secret(served: Served) -> None:
    """An unknown key is named in the 422, without a credential in it and cut when huge."""
    from tests.conftest import fake

    token = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")
    for key in (token, "k" * 100_000):
        r = served.client.post(
            "/api/agents/ada/memory",
            json={"action": "add", "text": "x", "section": "Decisions", key: 1},
            headers=served.auth("cy"),
        )
        assert r.status_code == 422 and token not in r.text and len(r.text) < 3000
    assert served.rv.memory_read("ada").revision == 0


def test_an_unreadable_body_and_a_wrong_method_say_what_to_do(served: Served) -> None:
    """Bytes that are not UTF-8 get invalid_body with what to send; a method a path does not
    take gets 405 with its Allow header."""
    r = served.client.post(
        "/api/agents/ada/memory",
        content=b'{"action": "add", "text": "caf\\xe9"}'.replace(b"\\xe9", b"\xe9"),
        headers={**served.auth("cy"), "Content-Type": "application/json"},
    )
    assert r.status_code == 400 and error_of(r)["code"] == "invalid_body"
    assert "UTF-8 JSON" in error_of(r)["message"]
    r = served.client.delete("/api/agents/ada", headers=served.auth("cy"))
    assert r.status_code == 405 and "GET" in r.headers["allow"]
    assert served.rv.memory_read("ada").revision == 0


def test_a_wrong_method_is_answered_with_every_method_the_path_takes(served: Served) -> None:
    """15: a 405's ``Allow`` names every method of the path, not only the first route's (each
    method of a path is a route of its own), on the API and on the admin page's paths."""
    for method, path, allow in (
        ("DELETE", "/api/agents/ada/memory", "GET, POST"),
        ("PUT", "/api/agents", "GET, POST"),
        ("PATCH", "/api/health", "GET"),
        ("DELETE", "/admin/login", "GET, POST"),
    ):
        r = served.client.request(method, path, headers=served.auth("cy"))
        assert r.status_code == 405, (path, r.status_code)
        assert r.headers["allow"] == allow, (path, r.headers["allow"])
        if path.startswith("/api/"):
            assert error_of(r)["code"] == "method_not_allowed"
            assert f"it answers {allow}" in error_of(r)["message"]
    assert served.rv.memory_read("ada").revision == 0


def test_a_store_failing_while_a_token_is_checked_is_a_json_503(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token of a request with a body is checked before the body is read; when the state
    store fails there (PostgreSQL dropped the connection), the answer is the JSON error shape
    with 503, never a plain-text 500. The failure is injected at the facade's boundary."""
    from reverie.errors import StorageFault

    def failing(token: str) -> None:
        raise StorageFault("PostgreSQL: the connection was closed.", code="storage_unavailable")

    monkeypatch.setattr(served.rv, "authenticate", failing)
    r = served.client.post(
        "/api/agents/ada/memory",
        json={"action": "add", "text": "x", "section": "Decisions"},
        headers=served.auth("cy"),
    )
    assert r.status_code == 503 and error_of(r)["code"] == "storage_unavailable"
