"""The event broker's promises, one by one (issue 22: the mutants of server/events.py): every page is sent
every event until it falls a whole queue behind, a dropped or closed page is told to stop and never hangs,
listeners run on the server's loop and one failing never stops the rest, an event's JSON is made once."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import timezone

import pytest

from dicecam.server.events import JSON_CACHE_SIZE, Broker, make_event


def _status(i: int):
    return make_event("camera.status", {"status": "running", "skipped_frames": i})


def test_an_event_is_made_with_its_own_id_and_a_time_in_utc():
    a, b = _status(1), _status(1)
    assert a.id != b.id
    assert a.ts.tzinfo is not None and a.ts.utcoffset() == timezone.utc.utcoffset(None)


def test_a_page_may_fall_256_events_behind_before_it_is_dropped(caplog):
    broker = Broker()
    page = broker.connect()
    for i in range(256):
        broker.publish(_status(i))
    assert not page.dropped and broker.client_count == 1
    with caplog.at_level(logging.WARNING, logger="dicecam.server.events"):
        broker.publish(_status(256))
    assert page.dropped and broker.client_count == 0 and broker.dropped_clients == 1
    assert caplog.messages == ["dropped a slow event client (queue of 256 full)"]


def test_every_slow_page_is_counted_and_told_to_stop():
    broker = Broker(queue_size=2)
    slow = [broker.connect() for _ in range(3)]
    for i in range(3):
        broker.publish(_status(i))
    assert broker.dropped_clients == 3 and broker.client_count == 0

    async def drain(c):
        return [await asyncio.wait_for(c.next(), 1) for _ in range(3)]  # a stopped page never waits

    for c in slow:  # the oldest event made room for the stop; then it stays stopped
        got = asyncio.run(drain(c))
        assert [e.data.skipped_frames for e in got[:1]] == [1] and got[1:] == [None, None]


def test_up_to_500_pages_may_connect():
    broker = Broker()
    pages = [broker.connect() for _ in range(500)]
    with pytest.raises(OverflowError, match="limit 500"):
        broker.connect()
    broker.disconnect(pages[0])
    assert broker.client_count == 499
    broker.connect()


def test_a_disconnected_page_is_sent_nothing_more():
    broker = Broker()
    gone, stays = broker.connect(), broker.connect()
    broker.disconnect(gone)
    broker.publish(_status(1))
    assert gone.queue.empty() and stays.queue.qsize() == 1 and broker.client_count == 1


def test_a_failing_listener_is_logged_and_the_others_still_run(caplog):
    broker = Broker()
    heard = []

    def broken(ev):
        raise ValueError("listener down")

    broker.add_listener(broken)
    broker.add_listener(heard.append)
    ev = _status(1)
    with caplog.at_level(logging.ERROR, logger="dicecam.server.events"):
        broker.publish(ev)
    assert heard == [ev]
    assert caplog.messages == ["event listener failed"] and "listener down" in caplog.text


def test_on_the_loop_an_event_is_queued_at_once_and_from_a_thread_it_is_delivered_on_the_loop():
    async def scenario():
        broker = Broker()
        broker.bind(asyncio.get_running_loop())
        page = broker.connect()
        threads = []
        broker.add_listener(lambda ev: threads.append(threading.current_thread()))
        broker.publish(_status(0))
        assert page.queue.qsize() == 1 and threads == [threading.main_thread()]  # no hop, no wait
        t = threading.Thread(target=broker.publish, args=(_status(1),))
        t.start()
        t.join()
        assert page.queue.qsize() == 1  # not yet: it waits for the loop
        got = [await asyncio.wait_for(page.next(), 5) for _ in range(2)]
        assert [e.data.skipped_frames for e in got] == [0, 1]
        assert threads == [threading.main_thread()] * 2  # the listener ran on the loop's thread both times

    asyncio.run(scenario())


def test_closing_ends_every_page_and_a_page_that_asks_again_is_not_left_waiting():
    async def scenario():
        broker = Broker(queue_size=2)
        broker.bind(asyncio.get_running_loop())
        full, idle = broker.connect(), broker.connect()
        full.queue.put_nowait(_status(0))
        full.queue.put_nowait(_status(1))
        broker.close()
        assert broker.closing is True
        await asyncio.sleep(0)
        assert broker.client_count == 0 and full.dropped and idle.dropped
        assert await asyncio.wait_for(idle.next(), 1) is None
        assert await asyncio.wait_for(idle.next(), 1) is None
        rest = [await asyncio.wait_for(full.next(), 1) for _ in range(3)]
        assert rest[0].data.skipped_frames == 1 and rest[1:] == [None, None]

    asyncio.run(scenario())


def test_closing_before_the_server_runs_or_after_its_loop_ended():
    broker = Broker()
    broker.close()
    assert broker.closing is True
    loop = asyncio.new_event_loop()
    broker.bind(loop)
    loop.close()
    broker.close()  # nothing to end: no error
    broker.publish(_status(1))  # the loop is gone: listeners only, no error


def test_an_events_json_is_made_once_for_the_latest_512_events():
    broker = Broker()
    events = [_status(i) for i in range(JSON_CACHE_SIZE + 1)]
    texts = [broker.json(ev) for ev in events]
    assert texts[5] == events[5].model_dump_json()
    assert broker.json(events[-1]) is texts[-1]  # the same text, not made again
    assert broker.json(events[1]) is texts[1]  # the oldest kept of 512
    assert broker.json(events[0]) is not texts[0] and broker.json(events[0]) == texts[0]  # made again
