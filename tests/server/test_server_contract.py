"""The OpenAPI document is the contract: schemathesis generates requests from it (valid and invalid) and
checks each answer against it with all its checks — status codes documented, bodies of the documented
shape, content types as declared. Bounded for CI: a fixed number of examples per operation, derandomised."""

from __future__ import annotations

import tempfile

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (pip install '.[test]')")
from hypothesis import HealthCheck, settings  # noqa: E402

from conftest import FakePipeline  # noqa: E402
from learning_reader import learning_reader  # noqa: E402
from dicecam.server.app import create_app  # noqa: E402
from dicecam.server.rulebook import load_rules  # noqa: E402
from dicecam.server.settings import ServerSettings  # noqa: E402
from dicecam.server.store import RollStore  # noqa: E402


def _app(tmp_dir):
    s = ServerSettings(data_dir=tmp_dir, allowed_hosts=["testserver", "localhost"])
    # A reader that can learn, so the dice-memory routes answer as they do on a real server.
    return create_app(s, RollStore(s.db_path), pipeline=FakePipeline(), reader=learning_reader(), rules=load_rules())


APP = _app(tempfile.mkdtemp(prefix="dicecam-contract-"))
# The live streams never end on their own: their contract is checked by the event and video tests.
# What no schema can say, answered as documented: 400 for a well-formed roll the rules refuse (three d6
# under a d6-d8-d10 system), 413/415 for an upload whose bytes are too many or not an image, 409 for
# teaching a die when the camera shows none or several.
CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {"checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "401", "403", "404", "409", "413", "415"]}}})
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG).exclude(
    path=["/api/events", "/api/video.mjpg"])


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_api_answers_as_documented(case):
    case.call_and_validate()

