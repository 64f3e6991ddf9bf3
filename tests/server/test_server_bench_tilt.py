"""The tilt benchmark reads the same tables from several camera tilts, and only the camera moves between them."""

import numpy as np
import pytest

from dicecam.datasets import render

ok, why = render.egl_available()
pytestmark = pytest.mark.skipif(not ok, reason=f"no headless OpenGL (EGL) context: {why}")

from dicecam.server.benchmarks.tilt import bench_tilt, tilted_table  # noqa: E402


def test_every_tilt_of_a_table_rolls_the_same_dice_the_same_faces_up_and_only_the_camera_leans():
    (flat, flat_fx), (steep, steep_fx) = tilted_table(70_001, 0), tilted_table(70_001, 60)
    assert [(d.kind, d.value, d.material) for d in flat.scene.dice] == [(d.kind, d.value, d.material)
                                                                        for d in steep.scene.dice]
    assert all(np.allclose(a.R, b.R) for a, b in zip(flat.scene.dice, steep.scene.dice))
    assert flat_fx == steep_fx

    def off_vertical(layout):  # the angle between the camera's line of sight and straight down
        sight = -np.linalg.inv(layout.camera.view)[:3, 2]
        return np.degrees(np.arccos(-sight[2] / np.linalg.norm(sight)))

    assert off_vertical(flat) == pytest.approx(0, abs=0.5)
    assert off_vertical(steep) == pytest.approx(60, abs=0.5)


def test_one_row_per_tilt_in_order_each_counting_within_its_dice():
    rows = bench_tilt(tables=2, tilts=(0, 60))
    assert [r["off_vertical_deg"] for r in rows] == [0, 60]
    for r in rows:
        assert r["bench"] == "tilt" and r["tables"] == 2 and r["dice"] > 0
        assert 0 <= r["read_right"] <= r["kind_right"] <= r["boxed"] <= 1
        assert 0 <= r["sure_wrong"] <= r["sure"] <= r["dice"]
        assert r["finder_facing_median"] is None or 0 <= r["finder_facing_median"] <= 1
