"""The API against its own OpenAPI spec (SPEC 11, 12): schemathesis generates requests from
``/openapi.json`` for every operation, valid ones and invalid ones, and finds no 5xx and no
response that breaks its schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from reverie.http import create_app
from tests.server.conftest import workspace

CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]


def test_no_5xx_and_every_answer_matches_its_schema(tmp_path: Path) -> None:
    rv, tokens = workspace(tmp_path / "home")
    rv.memory_apply(
        "ada", {"action": "add", "text": "We deploy on Tuesdays.", "section": "Decisions"}
    )
    # The MCP endpoint speaks a protocol of its own (tested with the MCP client); the admin
    # page answers HTML.
    app = create_app(rv, mcp=False, admin=False)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    headers = {"Authorization": f"Bearer {tokens['olga']}"}
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 24  # every route of the API (health included)
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = operation.as_strategy(generation_mode=mode)

            @given(case=strategy)
            @settings(
                max_examples=12,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: Any) -> None:
                case.call_and_validate(headers=headers, checks=CHECKS)

            try:
                check()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # nothing to break: no parameters
            except Exception as exc:  # one operation's failure must not hide another's
                failures.append(f"{operation.label} ({mode.value}): {str(exc)[:600]}")
    rv.close()
    assert not failures, "\n\n".join(failures)
