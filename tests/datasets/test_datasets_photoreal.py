"""The photoreal renderer: what it samples (views, sizes, poses, labels) without bpy, and one tiny
Cycles render whose boxes cover the dice it drew (skipped where bpy is not installed)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from dicecam.datasets import geometry as g
from dicecam.datasets.photoreal import bpy_problem, faces, fonts, looks
from dicecam.datasets.photoreal import sample as ps
from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics.errors import DicecamError

KINDS = list(g.KINDS)
READER_COLOURS = set(json.loads((Path(g.__file__).parents[1] / "models" / "reader.json").read_text())["colours"])


def scenes(n, **kw):
    for seed in range(n):
        yield ps.sample_scene(np.random.default_rng(seed), KINDS, 640, 480, fonts.system_fonts(), **kw)


def test_views_look_down_within_65_degrees_and_stay_level():
    for s in scenes(60):
        cam = s.camera
        axis = (cam.target - cam.eye) / np.linalg.norm(cam.target - cam.eye)
        off = np.degrees(np.arccos(-axis[2]))
        assert 0 <= off <= ps.MAX_OFF_VERTICAL + 1e-6
        assert off == pytest.approx(cam.off_vertical, abs=1e-6)
        assert abs(cam.roll) <= ps.MAX_ROLL
        # "Up" in the image is away from the camera on the table: a step away from the lens
        # moves up the frame, tilted by no more than the roll.
        away = np.r_[cam.target[:2] - cam.eye[:2], 0.0]
        if np.linalg.norm(away) > 1e-3 * np.linalg.norm(cam.target - cam.eye):
            away /= np.linalg.norm(away)
            (a, b), _ = cam.project(np.array([cam.target, cam.target + away]))
            d = b - a
            tilt = np.degrees(np.arctan2(d[0], -d[1]))
            assert abs(tilt) <= ps.MAX_ROLL + 0.5


def test_values_are_read_off_the_resting_pose():
    for s in scenes(40):
        for d in s.dice:
            mesh = g.build(d.kind, d.style)
            assert d.value == g.value_up(mesh, d.R)
            if d.cocked:
                continue
            # The die lies on a face: the labelled face points straight up (d4: straight down).
            nz = (mesh.normals @ d.R.T)[:, 2]
            i = int(np.argmin(nz) if d.kind == "d4" else np.argmax(nz))
            assert abs(abs(nz[i]) - 1) < 1e-6 and mesh.faces[i].value == d.value
            assert (mesh.vertices @ d.R.T * d.scale + d.pos)[:, 2].min() == pytest.approx(0, abs=1e-6)


def test_dice_never_overlap_unless_one_leans_on_another():
    for s in scenes(40):
        for i, a in enumerate(s.dice):
            for b in s.dice[i + 1:]:
                if a.cocked or b.cocked:
                    continue
                pb = (g.build(b.kind, b.style).vertices @ b.R.T) * b.scale
                assert ps._apart(a, pb, b.pos[:2], gap=0.0)


def test_die_sizes_span_small_to_closeup():
    widths, close = [], []
    for s in scenes(80):
        read = ps.truth(s, "t")
        for r in read.dice:
            x1, y1, x2, y2 = r.box
            if 0 < x1 and x2 < 640 and 0 < y1 and y2 < 480:
                widths.append(x2 - x1)
    for s in scenes(20, closeup=True):
        close += [r.box[3] - r.box[1] for r in ps.truth(s, "t").dice]
    assert 0.8 * ps.PX_RANGE[0] * 0.7 <= min(widths) < 40 and max(widths) > 150
    assert np.median(close) >= 480 / 4  # a close-up die fills about a third of the frame


def test_boxes_are_the_projected_mesh_clipped_to_the_frame():
    rng = np.random.default_rng(5)
    s = ps.sample_scene(rng, ["d20"], 640, 480, (), n_dice=1, closeup=True)
    (d,) = s.dice
    cam = s.camera
    mid = cam.unproject_to_table(320, 240)
    d.pos = np.array([mid[0], mid[1], d.pos[2]])
    pts = g.build("d20", "num").vertices @ d.R.T * d.scale + d.pos
    uv, _ = cam.project(pts)
    (r,) = ps.truth(s, "t").dice
    assert r.box == pytest.approx((uv[:, 0].min(), uv[:, 1].min(), uv[:, 0].max(), uv[:, 1].max()))
    assert r.value == d.value and r.colour == d.look.colour and r.type.value == "d20"
    # Move the die so its centre sits on the left edge of the frame: half of it is cut off.
    edge = cam.unproject_to_table(0, 240)
    d.pos = np.array([edge[0], edge[1], d.pos[2]])
    (r,) = ps.truth(s, "t").dice
    full = ps.die_box(s, d, np.zeros((1, 3)) + g.build("d20", "num").vertices)
    assert r.box[0] == 0.0 and 0 < r.box[2] < 640 and full == r.box
    # Entirely outside the frame: no label.
    far = cam.unproject_to_table(-2000, 240)
    d.pos = np.array([far[0], far[1], d.pos[2]])
    assert ps.truth(s, "t").dice == []


def test_looks_name_a_reader_colour_and_every_material_occurs():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        lk = looks.sample_look(rng, fonts.system_fonts())
        assert lk.colour in READER_COLOURS
        assert lk.paint in looks.PAINTS
        seen.add(lk.material)
        if lk.material == "gem" and lk.colour == "clear":
            assert min(lk.body) > 0.7
    assert seen == set(looks.MATERIALS)


def test_fonts_fall_back_to_the_bundled_ones():
    bundled = fonts.system_fonts(roots=())
    assert bundled and all(Path(f).is_file() for f in bundled)
    assert fonts.system_fonts()[: len(bundled)] == bundled


@pytest.mark.parametrize("kind,style", [("d4", "vertex"), ("d4", "base"), ("d6", "pips"), ("d6", "num"),
                                        ("d8", "num"), ("d10", "num"), ("d00", "num"), ("d12", "num"), ("d20", "num")])
def test_every_face_carries_ink_inside_its_outline(kind, style):
    font = fonts.system_fonts()[-1]
    atlas = faces.ink_atlas(kind, style, font, 0.03, 1.0, "bar")
    H, W = atlas.shape
    inside = np.zeros((H, W), np.uint8)
    for poly in faces.atlas_uvs(kind, style):
        one = np.zeros((H, W), np.uint8)
        cv2.fillPoly(one, [np.round(np.array(poly) * [W, H]).astype(np.int32)], 1)
        assert (atlas * one).sum() > 20, "a face without numerals"
        inside |= one
    assert atlas[inside == 0].max() == 0  # nothing printed outside a face


def test_six_and_nine_are_marked_by_bar_or_dot():
    font = fonts.system_fonts()[0]
    for mark in ("bar", "dot"):
        six, _ = faces.glyph_image("6", 60, font, 0.0, mark, True, 500)
        plain, _ = faces.glyph_image("6", 60, font, 0.0, mark, False, 500)
        assert six.shape != plain.shape  # the mark adds below (bar) or to the right (dot)
        assert (six.shape[0] > plain.shape[0]) == (mark == "bar")


def test_cli_without_bpy_names_the_extra(monkeypatch, tmp_path, capsys):
    import dicecam.datasets.photoreal as pr
    from dicecam.server.cli import main

    monkeypatch.setattr(pr, "bpy_available", lambda: False)
    rc = main(["synth", "--renderer", "photoreal", "--out", str(tmp_path / "o"), "--count", "1"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "dicecam[photoreal]" in err and "pip install" in err
    assert not (tmp_path / "o").exists()


def test_cli_rejects_gpu_for_the_gl_renderer(tmp_path, capsys):
    from dicecam.server.cli import main

    assert main(["synth", "--device", "gpu", "--out", str(tmp_path / "o"), "--count", "1"]) == 2
    assert "photoreal" in capsys.readouterr().err


def test_bpy_problem_tells_a_broken_bpy_from_a_missing_one(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "bpy", None)  # what `import bpy` meets where no bpy is installed
    assert bpy_problem() == "bpy (the photoreal extra) is not installed"

    broken = tmp_path / "bpy.py"
    broken.write_text('raise ImportError("libSM.so.6: cannot open shared object file: No such file or directory")\n')
    monkeypatch.delitem(sys.modules, "bpy")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert bpy_problem() == ("bpy is installed but does not load: ImportError: libSM.so.6: cannot open shared "
                             "object file: No such file or directory")
    broken.write_text("import numpy_it_was_built_for\n")
    assert bpy_problem() == ("bpy is installed but does not load: ModuleNotFoundError: "
                             "No module named 'numpy_it_was_built_for'")


BPY_PROBLEM = bpy_problem()
needs_bpy = pytest.mark.skipif(BPY_PROBLEM is not None, reason=BPY_PROBLEM or "")


@needs_bpy
def test_tiny_render_boxes_cover_the_dice_pixels():
    from dicecam.datasets.photoreal.run import stage

    st = stage(samples=4)
    for seed, kind in ((3, "d20"), (4, "d6"), (9, "d4")):
        s = ps.sample_scene(np.random.default_rng(seed), [kind], 96, 72, fonts.system_fonts(), n_dice=1, closeup=True)
        mask = st.die_mask(s)
        (r,) = ps.truth(s, "t", st.hull).dice
        ys, xs = np.nonzero(mask > 127)
        assert len(xs) > 30
        x1, y1, x2, y2 = r.box
        # every die pixel lies in the box, and the box is tight around them
        assert xs.min() >= x1 - 1 and xs.max() + 1 <= x2 + 1 and ys.min() >= y1 - 1 and ys.max() + 1 <= y2 + 1
        assert xs.min() <= x1 + 2 and xs.max() + 1 >= x2 - 2 and ys.min() <= y1 + 2 and ys.max() + 1 >= y2 - 2


@needs_bpy
def test_tiny_run_writes_files_that_parse(tmp_path):
    from dicecam.datasets.synth import generate

    s = generate(tmp_path / "j", 1, 7, ["d8"], "jsonl", progress=False, width=96, height=72, renderer="photoreal")
    assert s.images == 1
    (line,) = (tmp_path / "j" / "reads.jsonl").read_text().splitlines()
    read = ImageRead.model_validate_json(line)
    img = cv2.imread(str(tmp_path / "j" / read.image))
    assert img.shape == (72, 96, 3) and img.std() > 1
    assert all(d.type.value == "d8" and 0 <= d.box[0] < d.box[2] <= 96 for d in read.dice)
    generate(tmp_path / "y", 1, 7, ["d8"], "yolo", progress=False, width=96, height=72, renderer="photoreal")
    labels = list((tmp_path / "y" / "labels").rglob("*.txt"))
    assert len(labels) == 1 and len(labels[0].read_text().splitlines()) == len(read.dice)


def test_sheet_crops_show_every_die_at_the_same_size():
    from dicecam.datasets.photoreal.sheets import DIE_FRACTION, TILE, crop_die

    for side, (x, y) in ((40, (100, 80)), (300, (350, 260))):
        img = np.zeros((600, 800, 3), np.uint8)
        img[y : y + side, x : x + side] = 255
        tile = crop_die(img, (x, y, x + side, y + side))
        cols = np.nonzero(tile[:, :, 0].max(0) > 127)[0]
        assert tile.shape == (TILE, TILE, 3)
        assert len(cols) == pytest.approx(TILE * DIE_FRACTION, abs=3)
        assert cols.mean() == pytest.approx(TILE / 2, abs=2)


def test_clutter_keeps_off_the_dice_and_never_hides_one():
    seen = set()
    for s in scenes(60):
        boxes = [r.box for r in ps.truth(s, "t").dice]
        for p in s.props:
            seen.add(p.name)
            pts = ps.prop_footprint(p)
            for d in s.dice:
                assert np.linalg.norm(pts - d.pos[:2], axis=1).min() > d.scale
            if p.name in ("mini", "laptop"):
                assert not ps._hides_a_die(p, s)
        assert len(boxes) <= len(s.dice)
    assert {"cable", "laptop", "pen", "coin", "mini", "card", "token"} <= seen


def test_exposure_meters_the_scene_like_a_camera():
    from dicecam.datasets.photoreal.tone import expose

    rng = np.random.default_rng(0)
    scene = rng.uniform(0.02, 0.6, (48, 64, 3)).astype(np.float32)
    scene[10:20, 10:20] = 40.0  # a specular highlight
    dim, bright = expose(scene * 0.01), expose(scene * 100)
    assert np.abs(dim.astype(int) - bright.astype(int)).max() <= 2  # same photo whatever the light level
    assert 60 < np.median(dim) < 190
    assert dim[12, 12].min() > 240 and dim.dtype == np.uint8
    assert np.median(expose(scene, stops=1.0)) > np.median(expose(scene))


def test_numerals_stand_out_from_the_body():
    rng = np.random.default_rng(1)
    for _ in range(300):
        lk = looks.sample_look(rng, ())
        if lk.material == "gem":  # shows what lies behind it, darker than its tint: only light paints show
            assert lk.paint in ("white", "gold", "silver"), (lk.colour, lk.paint)
            continue
        body = looks.luminance(lk.body)
        if lk.material == "metal":  # no black paint on dark metal
            assert lk.paint != "black" or body > 0.3, (lk.colour, lk.paint)
            continue
        ratio = (looks.luminance(looks.PAINTS[lk.paint][0]) + 0.02) / (body + 0.02)
        assert abs(np.log(ratio)) >= 1.3, (lk.material, lk.colour, lk.paint)


def test_a_bold_face_has_a_dice_makers_strokes_and_an_outline_thickens_them():
    bold = next(f for f in fonts.system_fonts() if f.endswith("LiberationSans-Bold.ttf"))  # bundled
    assert fonts.stroke_ratio(bold) >= fonts.MIN_STROKE
    assert fonts.stroke_ratio(bold, 0.03) > fonts.stroke_ratio(bold) + 0.03


def test_no_die_is_printed_in_hairlines(monkeypatch):
    # A thin face (strokes 0.05 of the digits' height, an outline adding 2.5 times its weight) gets an outline.
    monkeypatch.setattr(looks, "stroke_ratio", lambda font, weight=0.0: 0.05 + 2.5 * weight)
    rng = np.random.default_rng(3)
    weights = {looks.sample_look(rng, ("thin.ttf",)).weight for _ in range(40)}
    assert weights and min(weights) >= 0.03 - 1e-9
    assert all(0.05 + 2.5 * w >= fonts.MIN_STROKE for w in weights)
    # A face bold enough keeps the outline it was drawn with, none included.
    monkeypatch.setattr(looks, "stroke_ratio", lambda font, weight=0.0: 0.16 + 2.5 * weight)
    assert {looks.sample_look(rng, ("bold.ttf",)).weight for _ in range(40)} == {0.0, 0.03, 0.06}


@needs_bpy
def test_gpu_request_without_a_gpu_is_one_line(tmp_path, capsys):
    from dicecam.server.cli import main

    rc = main(["synth", "--renderer", "photoreal", "--device", "gpu", "--out", str(tmp_path / "g"),
               "--count", "1", "--width", "64", "--height", "48", "--quiet"])
    err = capsys.readouterr().err.strip()
    if rc != 0:  # on a machine with a CUDA/OptiX device the render simply runs
        assert rc == 2 and len(err.splitlines()) == 1 and "--device cpu" in err
        assert not (tmp_path / "g").exists()


@needs_bpy
def test_one_photoreal_die_rolled_again_keeps_its_look_and_table_and_is_read_off_its_pose():
    from dicecam.datasets.photoreal.run import one_die_rolls

    rolls = list(one_die_rolls(4, "d8", 4, width=240, height=180, samples=4))
    again = next(one_die_rolls(4, "d8", 1, width=240, height=180, samples=4))
    assert np.array_equal(rolls[0][0], again[0]), "roll i is the same picture for the same arguments"
    dice = [read.dice[0] for _, read in rolls]
    assert {d.type.value for d in dice} == {"d8"} and len({d.colour for d in dice}) == 1
    assert len({(d.value, d.box) for d in dice}) == 4, "each roll lands the die another way, somewhere else"
    # The table is drawn until the die's first roll is 7-20 % of the frame wide; rolled nearer or further,
    # perspective varies the others a little.
    assert 0.07 <= (dice[0].box[2] - dice[0].box[0]) / 240 <= 0.2, "a size a webcam reads"
    assert all(0.07 * 0.8 <= (d.box[2] - d.box[0]) / 240 <= 0.2 * 1.25 for d in dice)
    with pytest.raises(DicecamError):
        next(one_die_rolls(4, "d7", 1))


@needs_bpy
def test_a_photoreal_table_of_mixed_dice_keeps_each_die_and_rolls_them_all_anew():
    from dicecam.datasets.photoreal.run import table_rolls

    rolls = list(table_rolls(2, 3, 2, kinds=["d6", "d20"], width=240, height=180, samples=4))
    again = list(table_rolls(2, 3, 2, kinds=["d6", "d20"], width=240, height=180, samples=4))[1]
    assert np.array_equal(rolls[1][0], again[0]), "roll i is the same picture for the same arguments"
    reads = [read for _, read in rolls]
    assert all(sorted(d.type.value for d in r.dice) == ["d20", "d6", "d6"] for r in reads), "the kinds in turn"
    assert sorted(d.colour for d in reads[0].dice) == sorted(d.colour for d in reads[1].dice), "each keeps its look"
    assert {d.box for d in reads[0].dice}.isdisjoint(d.box for d in reads[1].dice), "each lands somewhere else"
    assert all(0.07 <= (d.box[2] - d.box[0]) / 240 <= 0.14 for d in reads[0].dice), "the first roll at a filmed size"
