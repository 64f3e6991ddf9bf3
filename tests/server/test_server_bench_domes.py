"""The dome benchmark reads the same tables with and without their dome, and scores only the dice under it."""

import pytest

from dicecam.datasets import render

ok, why = render.egl_available()
pytestmark = pytest.mark.skipif(not ok, reason=f"no headless OpenGL (EGL) context: {why}")

from dicecam.server.benchmarks.domes import bench_domes, dome_box, domed_tables, under_dome  # noqa: E402
from dicecam.datasets.scene import render_scene  # noqa: E402


def test_the_dice_under_a_dome_lie_inside_its_picture_and_the_others_do_not_count():
    with render.Renderer() as gl:
        for lay, eff in domed_tables(3):
            _, truth = render_scene(gl, lay.scene, eff, "t")
            box, under = dome_box(lay), under_dome(lay, truth.dice)
            assert under, "a dome is drawn over a die"
            for d in under:
                assert box[0] <= d.box[0] and box[1] <= d.box[1] and d.box[2] <= box[2] and d.box[3] <= box[3]
            assert len(under) <= len(truth.dice)


def test_rows_with_and_without_the_dome_over_the_same_dice():
    rows = bench_domes(tables=2)
    assert [r["dome"] for r in rows] == [False, True]
    assert rows[0]["dice_under_dome"] == rows[1]["dice_under_dome"] > 0
    for r in rows:
        assert 0 <= r["read_right"] <= r["boxed"] <= 1 and 0 <= r["sure_wrong"] <= r["sure"]
        assert r["bench"] == "domes" and r["tables"] == 2
