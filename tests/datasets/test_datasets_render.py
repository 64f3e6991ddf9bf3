"""Rendering and export: boxes match the projected dice, runs are deterministic, files are valid."""

import csv
import json

import cv2
import numpy as np
import pytest

from dicecam.datasets import render

ok, why = render.egl_available()
pytestmark = pytest.mark.skipif(not ok, reason=f"no headless OpenGL (EGL) context: {why}")

from dicecam.datasets import geometry as g  # noqa: E402
from dicecam.datasets import scene as sc  # noqa: E402
from dicecam.vision.crops import KINDS  # noqa: E402
from dicecam.mechanics.dice import ImageRead, reading_order  # noqa: E402
from dicecam.mechanics.errors import DicecamError, LimitError  # noqa: E402


@pytest.fixture(scope="module")
def gl():
    with render.Renderer() as r:
        yield r


@pytest.mark.parametrize("kind", list(g.KINDS))
def test_boxes_contain_the_projected_die(kind, gl):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        lay = sc.sample_scene(rng, [kind], 320, 240, 1, px_range=(40, 80))
        img, read = sc.render_scene(gl, lay.scene, None, "t")
        (d,) = lay.scene.dice
        (r,) = read.dice
        pts = (g.build(d.kind, d.style).vertices * d.scale) @ d.R.T + d.pos
        uv = lay.camera.project(pts)
        x1, y1 = np.clip(uv.min(0), 0, [320, 240])
        x2, y2 = np.clip(uv.max(0), 0, [320, 240])
        bx1, by1, bx2, by2 = r.box
        # visible pixels lie inside the projected die, and an unoccluded die fills its projection
        assert bx1 >= x1 - 1.5 and by1 >= y1 - 1.5 and bx2 <= x2 + 1.5 and by2 <= y2 + 1.5
        assert bx1 <= x1 + 2.5 and by1 <= y1 + 2.5 and bx2 >= x2 - 2.5 and by2 >= y2 - 2.5
        assert r.value == g.value_up(g.build(d.kind, d.style), d.R)
        assert r.type.value == kind and r.colour == d.colour


def test_render_image_truth_and_determinism(gl):
    a, ra = sc.render_image(7, renderer=gl, width=320, height=240, n_dice=4)
    with render.Renderer() as other:  # a fresh renderer, its atlases built anew, draws the same image
        b, rb = sc.render_image(7, renderer=other, width=320, height=240, n_dice=4)
    assert a.shape == (240, 320, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b) and ra == rb
    assert 1 <= len(ra.dice) <= 4
    assert ra.dice == reading_order(ra.dice)
    for d in ra.dice:
        assert d.confidence is None
        x1, y1, x2, y2 = d.box
        assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 240
    c, _ = sc.render_image(8, renderer=gl, width=320, height=240, n_dice=4)
    assert not np.array_equal(a, c)
    again, _ = sc.render_image(7, renderer=gl, width=320, height=240, n_dice=4)
    assert np.array_equal(a, again), "another renderer opened and closed since does not change what this one draws"


def test_bad_input_is_a_dicecam_error(gl):
    with pytest.raises(DicecamError):
        sc.render_image(1, renderer=gl, kinds=["d7"])
    with pytest.raises(DicecamError):
        sc.render_image(1, renderer=gl, width=10, height=10)


def test_the_renderer_belongs_to_its_caller_and_closing_it_releases_its_gl_context():
    with render.Renderer() as r:
        sc.render_image(3, renderer=r, width=160, height=120, n_dice=1)
    # No renderer is kept behind the caller's back, in the module or in the scene functions.
    held = [name for m in (render, sc) for name, v in vars(m).items() if isinstance(v, render.Renderer)]
    assert held == []
    with pytest.raises(Exception):
        r.render(sc.sample_scene(np.random.default_rng(0), ["d6"], 160, 120, 1).scene)


@pytest.mark.parametrize("fmt", ["yolo", "crops", "jsonl"])
def test_generate_is_deterministic_and_valid(tmp_path, fmt):
    from dicecam.datasets.synth import generate

    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        s = generate(out, 3, 11, ["d6", "d20"], fmt, progress=False, width=256, height=192)
        assert s.images == 3
        outs.append(out)
    files_a = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file() and p.name != "summary.json")
    files_b = sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file() and p.name != "summary.json")
    assert files_a == files_b and files_a
    for rel in files_a:
        if rel.suffix in (".txt", ".jsonl", ".csv", ".png", ".jpg"):  # data.yaml holds the absolute path
            assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel
    out = outs[0]
    if fmt == "yolo":
        y = (out / "data.yaml").read_text()
        assert f"path: {out.resolve()}" in y
        names = [l.split(": ")[1] for l in y.splitlines() if l.startswith("  ")]
        assert tuple(names) == KINDS
        for lab in (out / "labels").rglob("*.txt"):
            img = cv2.imread(str(out / "images" / lab.parent.name / (lab.stem + ".jpg")))
            assert img is not None and img.shape == (192, 256, 3)
            for row in lab.read_text().splitlines():
                c, *xywh = row.split()
                assert KINDS[int(c)] in ("d6", "d20")
                assert all(0 <= float(v) <= 1 for v in xywh)
    elif fmt == "crops":
        rows = list(csv.DictReader(open(out / "crops.csv")))
        assert rows
        for r in rows:
            img = cv2.imread(str(out / r["path"]))
            assert img.shape == (96, 96, 3)
            folder = r["path"].split("/")[1]
            assert folder == f"{r['kind']}_{r['value']}"
            assert r["path"].startswith("crops_cocked/" if r["cocked"] == "1" else "crops/")
    else:
        lines = (out / "reads.jsonl").read_text().splitlines()
        assert len(lines) == 3
        for line in lines:
            read = ImageRead.model_validate_json(line)
            assert (out / read.image).exists()
            assert read.dice == reading_order(read.dice)
            assert json.loads(line)["width"] == 256


def test_clip_settles_and_truth_matches_last_frame(gl):
    from dicecam.datasets.clip import render_clip

    c = render_clip(5, renderer=gl, kinds=["d8"], width=192, height=144, fps=15, n_dice=2, hold_s=0.4)
    assert len(c.frames) == len(c.per_frame)
    assert 0 < c.settled_at < len(c.frames)
    assert c.truth == c.per_frame[-1]
    # at rest: every frame from settled_at on reads the same values
    final = [(d.type, d.value) for d in c.truth.dice]
    for r in c.per_frame[c.settled_at :]:
        assert [(d.type, d.value) for d in r.dice] == final
    assert not np.array_equal(c.frames[0], c.frames[-1])


def test_cli_synth_and_contact_sheet(tmp_path):
    from dicecam.server.cli import main

    out = tmp_path / "set"
    assert main(["synth", "--out", str(out), "--count", "2", "--seed", "1", "--kinds", "d10,d00",
                 "--format", "jsonl", "--width", "200", "--height", "160", "--quiet"]) == 0
    sheet = tmp_path / "sheet.png"
    assert main(["contact-sheet", "--out", str(sheet), "--from", str(out), "--count", "2", "--tile", "100"]) == 0
    assert cv2.imread(str(sheet)) is not None
    assert main(["synth", "--out", str(out), "--count", "1", "--kinds", "d7"]) == 2
    assert main(["synth", "--out", str(out), "--count", "1", "--format", "coco"]) == 2


def test_one_die_rolled_again_keeps_its_look_and_table_and_each_roll_is_read_off_its_pose(gl):
    rolls = list(sc.one_die_rolls(3, "d12", 6, renderer=gl, width=320, height=240))
    again = next(sc.one_die_rolls(3, "d12", 1, renderer=gl, width=320, height=240))
    assert np.array_equal(rolls[0][0], again[0]), "roll i is the same picture for the same arguments"
    dice = [read.dice[0] for _, read in rolls if read.dice]
    assert len(dice) >= 5 and {d.type.value for d in dice} == {"d12"} and len({d.colour for d in dice}) == 1
    assert len({d.value for d in dice}) >= 3, "each roll lands the die another way"
    corners = [img[:8, :8].astype(int).mean() for img, _ in rolls]
    assert max(corners) - min(corners) < 12, "the table and light around the die stay"
    with pytest.raises(DicecamError):
        next(sc.one_die_rolls(3, "d7", 1, renderer=gl))


def test_one_die_per_kind_is_rolled_into_a_folder_of_its_own_and_a_stopped_run_resumes(tmp_path, capsys):
    from dicecam.server.cli import main
    from dicecam.vision.evaluate import load_truth

    out = tmp_path / "rolls"
    args = ["synth", "--one-die", "--out", str(out), "--count", "2", "--kinds", "d4,d8", "--seed", "5",
            "--width", "200", "--height", "160", "--quiet"]
    assert main(args) == 0
    assert sorted(p.name for p in out.iterdir()) == ["d4-5", "d8-5"]
    items = list(load_truth(out / "d8-5"))
    assert len(items) == 2 * 8, "rolls per face times the die's faces"
    dice = [d for i in items for d in i.dice]
    assert {d.kind.value for d in dice} == {"d8"} and len({d.value for d in dice}) >= 4
    assert all(i.path.is_file() for i in items)
    capsys.readouterr()
    (out / "d8-5" / "summary.json").unlink()  # as if stopped in the d8: the d4 is kept, the d8 rendered again
    kept = (out / "d4-5" / "reads.jsonl").stat().st_mtime_ns
    assert main(args) == 0
    assert "wrote 1 dice (16 rolls)" in capsys.readouterr().out
    assert (out / "d4-5" / "reads.jsonl").stat().st_mtime_ns == kept
    assert len(list(load_truth(out / "d8-5"))) == 16
    alone = tmp_path / "alone"
    assert main([*args[:3], str(alone), "--count", "1", "--kinds", "d8", *args[8:]]) == 0
    first = sorted((out / "d8-5" / "images").iterdir())[0]
    assert np.array_equal(cv2.imread(str(first)), cv2.imread(str(sorted((alone / "d8-5" / "images").iterdir())[0]))), \
        "a seed's d8 is the same die whichever other kinds are rolled beside it"


def test_one_die_refuses_what_it_cannot_write_in_one_line(tmp_path, capsys):
    from dicecam.server.cli import main

    out = tmp_path / "rolls"
    for extra in (["--format", "yolo"], ["--clip"], ["--count", "0"], ["--kinds", "d7"]):
        assert main(["synth", "--one-die", "--out", str(out), "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_table_of_mixed_dice_rolled_together_keeps_each_die_and_lands_them_apart_anew(gl):
    rolls = list(sc.table_rolls(4, 10, 4, renderer=gl, width=480, height=360))
    again = list(sc.table_rolls(4, 10, 2, renderer=gl, width=480, height=360))[1]
    assert np.array_equal(rolls[1][0], again[0]), "roll i is the same picture for the same arguments"
    kinds = [sorted(d.type.value for d in read.dice) for _, read in rolls]
    every = sorted(["d4", "d6", "d8", "d10", "d00", "d12", "d20", "d4", "d6", "d8"])
    assert sum(k == every for k in kinds) >= 3, "the kinds in turn: each there before any is twice"
    colours = [sorted(d.colour for d in read.dice) for _, read in rolls if len(read.dice) == 10]
    assert all(c == colours[0] for c in colours), "each die keeps its look"
    places = [sorted((round(d.box[0]), round(d.box[1])) for d in read.dice) for _, read in rolls]
    assert len({tuple(p) for p in places}) == 4, "every roll lands the dice somewhere else"


def test_dice_rolled_anew_land_apart_in_the_middle_of_the_view():
    rng = np.random.default_rng(0)
    flat = lambda u, v: np.array([u / 4.0, v / 4.0, 0.0])  # noqa: E731 - a camera straight down, 4 px per mm
    radii = [12.0, 11.0, 13.0, 12.5, 11.0, 12.0]
    spots = sc.spread(rng, flat, radii, 640, 480, (0.15, 0.85))
    for i, (p, r) in enumerate(zip(spots, radii)):
        assert 0.15 * 160 <= p[0] <= 0.85 * 160 and 0.15 * 120 <= p[1] <= 0.85 * 120
        assert all(np.linalg.norm(p - q) >= r + s for q, s in zip(spots[:i], radii[:i])), "no die touches another"
    with pytest.raises(LimitError):
        sc.spread(rng, flat, [40.0] * 12, 640, 480, (0.15, 0.85))


def test_one_table_is_rolled_into_one_folder_that_the_teaching_bench_reads_as_a_table(tmp_path, capsys):
    from dicecam.server.benchmarks.teach import _to_teach
    from dicecam.server.cli import main
    from dicecam.vision.evaluate import load_truth

    out = tmp_path / "tables"
    args = ["synth", "--one-table", "--out", str(out), "--count", "12", "--dice", "4", "--kinds", "d6,d8",
            "--seed", "2", "--width", "320", "--height", "240", "--quiet"]
    assert main(args) == 0
    items = list(load_truth(out / "table-2"))
    assert len(items) == 12 and all(i.path.is_file() for i in items)
    assert all(sorted(d.kind.value for d in i.dice) == ["d6", "d6", "d8", "d8"] for i in items if len(i.dice) == 4)
    assert _to_teach(items, 3, __import__("random").Random(0))[2] == "other photos of the table"
    capsys.readouterr()
    kept = (out / "table-2" / "reads.jsonl").stat().st_mtime_ns
    assert main(args) == 0 and "kept" in capsys.readouterr().out
    assert (out / "table-2" / "reads.jsonl").stat().st_mtime_ns == kept, "a whole table is kept, not rendered again"


def test_one_table_refuses_what_it_cannot_write_in_one_line(tmp_path, capsys):
    from dicecam.server.cli import main

    out = tmp_path / "tables"
    for extra in (["--format", "yolo"], ["--workers", "2"], ["--count", "0"], ["--dice", "0"], ["--dice", "17"],
                  ["--kinds", "d7"], ["--one-die"]):
        assert main(["synth", "--one-table", "--out", str(out), "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_round_clutter_is_drawn_round_on_the_table_and_is_no_die(gl):
    rng = np.random.default_rng(3)
    lay = sc.sample_scene(rng, ["d6"], 320, 240, 1, px_range=(30, 40), elevation=80)
    scene, cam = lay.scene, lay.camera
    scene.props, scene.shadow_strength = [], 0.0  # no shadow: what changes is the coin alone
    plain, bare = sc.render_scene(gl, scene, None, "t")
    # A coin 24 mm across on the half of the picture away from the die, seen from nearly straight above.
    (die,) = scene.dice
    die_u = cam.project(die.pos[None])[0][0]
    x, y = cam.unproject_to_table(80 if die_u > 160 else 240, 120)[:2]
    M = np.diag([12.0, 12.0, 1.0, 1.0])
    M[:3, 3] = (x, y, 1.0)
    centre, rim = cam.project(np.array([[x, y, 2.0], [x + 12.0, y, 2.0]]))
    u, v = (int(round(c)) for c in centre)
    r = float(np.linalg.norm(rim - centre))
    # Coloured against the table under it, so that the coin is what changed most.
    scene.props = [(M, tuple(1.0 - plain[v, u, ::-1] / 255.0), "cylinder")]
    img, read = sc.render_scene(gl, scene, None, "t")
    assert read.dice == bare.dice, "clutter is never labelled a die"
    coin = (np.abs(img.astype(int) - plain.astype(int)).sum(2) > 120).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(coin)
    w, h, area = stats[labels[v, u], 2], stats[labels[v, u], 3], stats[labels[v, u], 4]
    assert abs(w - h) <= 2 and abs(w - 2 * r) <= 3, "as wide as tall, the coin's width on screen"
    assert area == pytest.approx(np.pi * (w / 2) ** 2, rel=0.15), "a disc, not a square"
    with pytest.raises(ValueError, match="no prop shape"):
        gl.prop_resources("torus")


def test_round_clutter_takes_no_draw_from_the_table_so_every_scene_keeps_the_draws_it_had(monkeypatch):
    for later in ("_holder", "_hand"):  # drawn after the round clutter, from the same generator
        monkeypatch.setattr(sc, later, lambda *a: [])

    def table(seed):
        rng = np.random.default_rng(seed)
        lay = sc.sample_scene(rng, list(g.KINDS), 640, 480, 6)
        return rng.random(), [d.pos.tolist() for d in lay.scene.dice], lay.scene.props

    seeds = range(20)
    with_round = [table(s) for s in seeds]
    assert any(any(p[2] == "cylinder" for p in props) for _, _, props in with_round)
    monkeypatch.setattr(sc, "_round_props", lambda *a: [])
    for (after, dice, props), (after2, dice2, props2) in zip(with_round, [table(s) for s in seeds]):
        assert (after, dice) == (after2, dice2)
        boxes = [p for p in props if p[2] == "box"]
        assert len(boxes) == len(props2) and all(np.array_equal(a[0], b[0]) for a, b in zip(boxes, props2))


def test_a_glass_dome_over_a_die_keeps_its_label_and_lets_it_be_seen(gl):
    rng = np.random.default_rng(3)
    lay = sc.sample_scene(rng, ["d20"], 640, 480, 1, px_range=(40, 50), elevation=70)
    scene, cam = lay.scene, lay.camera
    scene.props, scene.domes, scene.shadow_strength = [], [], 0.0
    scene.dice[0].pos[:2] = cam.unproject_to_table(320, 240)[:2]  # mid-frame: the whole dome in view
    bare_img, bare = sc.render_scene(gl, scene, None, "t")
    (die,) = scene.dice
    r = 2.5 * die.scale
    M = np.diag([r, r, r, 1.0])
    M[:3, 3] = (die.pos[0], die.pos[1], 0.0)
    scene.domes = [(M, (0.92, 0.94, 0.96), 0.08)]
    img, read = sc.render_scene(gl, scene, None, "t")
    assert read.dice == bare.dice, "the die under the glass keeps its box and value; the dome is no die"
    x1, y1, x2, y2 = (int(v) for v in read.dice[0].box)
    through = np.abs(img[y1:y2, x1:x2].astype(int) - bare_img[y1:y2, x1:x2].astype(int)).mean()
    assert through < 40, "the die is seen through the glass"
    # Glass seen edge on changes the table behind it more than glass that faces the camera: the outline shows.
    def change(at: float) -> float:
        a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        pts = np.c_[die.pos[0] + at * r * np.cos(a), die.pos[1] + at * r * np.sin(a), np.zeros_like(a)]
        uv = np.round(cam.project(pts)).astype(int)
        return float(np.abs(img[uv[:, 1], uv[:, 0]].astype(int) - bare_img[uv[:, 1], uv[:, 0]].astype(int)).sum(1).mean())

    assert change(0.97) > 25 and change(0.97) > 2 * change(0.6)


def test_domes_cover_a_die_whole_and_take_no_draw_from_the_table(monkeypatch):
    for later in ("_holder", "_hand"):  # drawn after the domes, from the same generator
        monkeypatch.setattr(sc, later, lambda *a: [])

    def table(seed):
        rng = np.random.default_rng(seed)
        lay = sc.sample_scene(rng, list(g.KINDS), 640, 480, 4)
        return rng.random(), [d.pos.tolist() for d in lay.scene.dice], lay.scene.props, lay.scene.domes, lay.scene.dice

    seeds = range(60)
    tables = [table(s) for s in seeds]
    domed = [t for t in tables if t[3]]
    assert domed, "some tables have a dome"
    for _, _, _, domes, dice in domed:
        ((M, _, alpha),) = domes
        r, foot = M[0, 0], M[:2, 3]
        gaps = [np.linalg.norm(d.pos[:2] - foot) for d in dice]
        assert any(gap + d.scale < r for gap, d in zip(gaps, dice)), "a die wholly under it"
        assert all(abs(gap - r) >= d.scale for gap, d in zip(gaps, dice)), "no die cut by the glass"
        assert 0 < alpha < 0.5, "glass you see through"
    monkeypatch.setattr(sc, "_dome", lambda *a: [])
    for before, after in zip(tables, [table(s) for s in seeds]):
        assert before[:2] == after[:2]
        assert len(before[2]) == len(after[2]) and all(np.array_equal(a[0], b[0]) for a, b in zip(before[2], after[2]))
        assert after[3] == []


def test_towers_stand_outside_trays_and_bowls_hold_every_die_and_neither_takes_a_draw(monkeypatch):
    monkeypatch.setattr(sc, "_hand", lambda *a: [])  # drawn after the holders, from the same generator

    def table(seed):
        rng = np.random.default_rng(seed)
        lay = sc.sample_scene(rng, list(g.KINDS), 640, 480, 3)
        return rng.random(), lay.scene

    seeds = range(80)
    tables = [table(s) for s in seeds]
    towers = bowls = 0
    for _, scene in tables:
        for M, _, shape in scene.props:
            if shape == "bowl":
                bowls += 1
                inner = M[0, 0] * render.BOWL_INNER
                assert all(np.linalg.norm(d.pos[:2] - M[:2, 3]) + d.scale <= inner for d in scene.dice), "every die inside"
            elif shape == "box" and M[2, 3] >= 60:  # a tower: no clutter stands that tall
                towers += 1
                assert scene.walls, "a tower stands at a tray"
                assert all(max(abs(d.pos[0] - M[0, 3]) - M[0, 0], abs(d.pos[1] - M[1, 3]) - M[1, 1]) > 0
                           for d in scene.dice), "no die inside the tower"
    assert towers and bowls
    monkeypatch.setattr(sc, "_holder", lambda *a: [])
    for (after, with_holder), (after2, without) in zip(tables, [table(s) for s in seeds]):
        assert after == after2 and [d.pos.tolist() for d in with_holder.dice] == [d.pos.tolist() for d in without.dice]
        kept = [p for p in with_holder.props if not (p[2] == "bowl" or (p[2] == "box" and p[0][2, 3] >= 60))]
        assert len(kept) == len(without.props) and all(np.array_equal(a[0], b[0]) for a, b in zip(kept, without.props))


def test_a_hand_lies_beside_the_dice_never_on_one_and_takes_no_draw(monkeypatch):
    def table(seed):
        rng = np.random.default_rng(seed)
        lay = sc.sample_scene(rng, list(g.KINDS), 640, 480, 3)
        return rng.random(), lay.scene

    tables = [table(s) for s in range(150)]
    hands = [scene for _, scene in tables if any(p[2] == "ball" for p in scene.props)]
    assert hands, "some tables have a hand"
    for scene in hands:
        parts = [p for p in scene.props if p[2] == "ball"]
        assert len(parts) == len(sc.HAND)
        for M, _, _ in parts:
            reach = np.linalg.norm(M[:3, :3], axis=0).max()
            assert all(np.linalg.norm(d.pos[:2] - M[:2, 3]) >= reach + d.scale for d in scene.dice), "clear of every die"
    monkeypatch.setattr(sc, "_hand", lambda *a: [])
    for (after, with_hand), (after2, without) in zip(tables, [table(s) for s in range(150)]):
        kept = [p for p in with_hand.props if p[2] != "ball"]
        assert after == after2 and [d[0].tolist() for d in with_hand.domes] == [d[0].tolist() for d in without.domes]
        assert len(kept) == len(without.props) and all(np.array_equal(a[0], b[0]) for a, b in zip(kept, without.props))


def test_dice_with_a_picture_face_lie_on_the_same_table_as_without_and_only_their_print_changes(gl):
    plain, plain_read = sc.render_image(11, renderer=gl, width=320, height=240, n_dice=6)
    again, again_read = sc.render_image(11, renderer=gl, width=320, height=240, n_dice=6, pictures=0.0)
    assert np.array_equal(plain, again) and plain_read == again_read, "no pictures asked: the table as it always was"
    pictured, read = sc.render_image(11, renderer=gl, width=320, height=240, n_dice=6, pictures=1.0)
    assert [(d.type, d.value, d.box) for d in read.dice] == [(d.type, d.value, d.box) for d in plain_read.dice]
    assert not np.array_equal(pictured, plain), "the pictures are drawn"


def test_every_die_but_a_d4_may_show_a_picture_and_the_share_is_checked():
    dice = [render.DieSpec(kind=k, style="num", font=0, engraved=False, R=np.eye(3), pos=np.zeros(3), scale=10.0,
                           colour="red", body=(1, 0, 0), body2=(1, 0, 0), ink=(1, 1, 1), material="solid")
            for k in ("d4", "d20", "d12")]
    assert [d.style for d in sc.with_pictures(dice, 1.0, 3)] == ["num", "picture", "picture"]
    assert [d.style for d in sc.with_pictures(dice, 0.0, 3)] == ["num", "num", "num"]
    with pytest.raises(LimitError):
        sc.with_pictures(dice, 1.5, 3)


def test_an_emblem_is_drawn_where_the_picture_faces_numeral_would_be():
    m = g.build("d20", "picture")
    top = m.values.index(20)
    emblems = [render._face_ink("d20", "picture", top, font) for font in range(3)]
    numeral = render._face_ink("d20", "num", top, 0)
    assert all(e.sum() > 0.2 * numeral.sum() for e in emblems), "each design prints about as much ink as a numeral"
    assert not np.allclose(emblems[0], emblems[1]) and not np.allclose(emblems[1], emblems[2])
    assert not np.allclose(emblems[0], numeral)


def test_synth_refuses_a_share_of_pictures_it_cannot_draw_in_one_line(tmp_path, capsys):
    from dicecam.server.cli import main

    out = tmp_path / "set"
    for extra in (["--pictures", "1.5"], ["--pictures", "0.5", "--clip"], ["--pictures", "0.5", "--one-die"]):
        assert main(["synth", "--out", str(out), "--count", "1", "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert main(["synth", "--out", str(out), "--count", "2", "--seed", "3", "--kinds", "d20", "--pictures", "1",
                 "--format", "jsonl", "--width", "200", "--height", "160", "--quiet"]) == 0
    assert json.loads((out / "summary.json").read_text())["pictures"] == 1.0

