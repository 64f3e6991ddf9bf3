"""The table makes the RollSession the camera feeds and attaches it to the pipeline, so rolls entered by hand
join the camera's; the demo clip's session is its own."""

from __future__ import annotations

from conftest import FakeReader, FakeRules, make_settings
from test_server_demo_rolls import DemoPipeline

from dicecam.server.app import create_app
from dicecam.server.store import RollStore


def test_the_table_attaches_the_session_rolls_typed_in_join(app_parts):
    app, _, pipeline, _, _ = app_parts
    table = app.state.table
    assert pipeline.session is not None and pipeline.session.source == "camera"
    assert table.session(table.system, table.options) is pipeline.session
    table.configure("sum", {"target": 9}, None)  # configured at once, so a roll typed in next joins it
    assert (pipeline.session.system, pipeline.session.options) == ("sum", table.options)
    assert table.session("sum", table.options) is pipeline.session


def test_the_demo_clips_session_is_not_the_tables(tmp_path):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    pipeline = DemoPipeline()
    table = create_app(s, store, pipeline=pipeline, reader=FakeReader(), rules=FakeRules()).state.table
    assert pipeline.session.source == "demo"
    assert table.session(table.system, table.options) is not pipeline.session
    store.close()
