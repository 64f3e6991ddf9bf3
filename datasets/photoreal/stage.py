"""The one bpy scene of a process: built once, re-dressed for every image, rendered with Cycles.

Building objects, node trees and images is what costs in Blender, so everything that can be is
made once (die meshes per kind and style, one material per pooled die, prop pools, the world)
and each image only moves objects and sets node values. Blender works in metres; the sampled
scene is in millimetres and is scaled by MM at this boundary.

bpy, bmesh and mathutils (the photoreal extra) are imported where they are used, so this module
imports, and its pure parts test, without Blender.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

import cv2
import numpy as np

from dicecam.mechanics.errors import DicecamError

from .. import geometry
from ..surfaces import PER_KIND, SURFACES
from ..surfaces import surface as surface_image
from . import faces
from .looks import PAINTS
from .sample import Die, Scene
from .tone import expose

MM = 0.001
BEVEL = {"d4": 0.07, "d6": 0.16, "d8": 0.06, "d10": 0.05, "d00": 0.05, "d12": 0.05, "d20": 0.05}
MAX_DICE = 16
MAX_IMAGES = 40  # ink atlases kept as bpy images


def _bpy():
    import bpy

    return bpy


def hdri_path(name: str) -> Path:
    import bpy

    root = Path(bpy.utils.resource_path("LOCAL")) / "datafiles" / "studiolights" / "world"
    return root / f"{name}.exr"


class _quiet:
    """Blender prints progress lines straight to the process's stdout/stderr; keep them off
    the command's output (errors still arrive as Python exceptions)."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc):
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)


class Stage:
    def __init__(self, device: str = "cpu", samples: int = 24) -> None:
        with _quiet():
            self._build(device, samples)

    def _build(self, device: str, samples: int) -> None:
        bpy = _bpy()
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.bpy = bpy
        self.scene = sc = bpy.context.scene
        sc.render.engine = "CYCLES"
        cy = sc.cycles
        cy.device = "CPU"
        if device == "gpu":
            self._use_gpu()
        cy.samples = samples
        cy.use_adaptive_sampling = True
        cy.adaptive_threshold = 0.06
        cy.use_denoising = True
        cy.denoiser = "OPENIMAGEDENOISE"
        # Albedo guides the denoiser to keep numeral edges; the accurate prefilter (denoising the
        # guides too) cost more than the path tracing itself on 2 cores.
        cy.denoising_input_passes = "RGB_ALBEDO"
        cy.denoising_prefilter = "FAST"
        cy.max_bounces, cy.diffuse_bounces, cy.glossy_bounces = 5, 2, 2
        cy.transmission_bounces, cy.transparent_max_bounces, cy.volume_bounces = 5, 4, 0
        cy.caustics_reflective = cy.caustics_refractive = False
        cy.blur_glossy = 1.0
        cy.sample_clamp_indirect = 5.0
        sc.render.use_persistent_data = True
        sc.render.threads_mode = "FIXED"
        sc.render.threads = max(1, os.cpu_count() or 1)
        # Linear frames: tone.expose meters and tone-maps them like a phone camera.
        sc.render.image_settings.file_format = "OPEN_EXR"
        sc.render.image_settings.color_mode = "RGB"
        sc.render.image_settings.color_depth = "16"
        sc.view_settings.view_transform = "Standard"
        self._tmp = Path(tempfile.mkdtemp(prefix="dicecam-photoreal-"))
        self._world()
        self._camera()
        self._table()
        self._lamp()
        self.meshes: dict[tuple[str, str], object] = {}
        self.hulls: dict[tuple[str, str], np.ndarray] = {}
        self.images: OrderedDict = OrderedDict()
        self.surfaces: dict[int, object] = {}
        self.die_mats: list = []
        self.dice = [self._die_object(i) for i in range(MAX_DICE)]
        self.pools: dict[str, list] = {}
        self.walls = [self._box_object(f"wall{i}", (0.3, 0.2, 0.1), 0.6) for i in range(4)]

    # ------------------------------------------------------------ setup
    def _use_gpu(self) -> None:
        prefs = self.bpy.context.preferences.addons["cycles"].preferences
        for kind in ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL"):
            try:
                prefs.compute_device_type = kind
                prefs.get_devices()
            except TypeError:
                continue
            devs = [d for d in prefs.devices if d.type == kind]
            if devs:
                for d in prefs.devices:
                    d.use = d.type == kind
                self.scene.cycles.device = "GPU"
                return
        raise DicecamError("--device gpu: Cycles found no CUDA/OptiX/HIP/oneAPI/Metal device here; use --device cpu")

    def _world(self) -> None:
        bpy = self.bpy
        w = bpy.data.worlds.new("world")
        self.scene.world = w
        _nodes_on(w)
        nt = w.node_tree
        nt.nodes.clear()
        tc = nt.nodes.new("ShaderNodeTexCoord")
        mp = nt.nodes.new("ShaderNodeMapping")
        env = nt.nodes.new("ShaderNodeTexEnvironment")
        bg = nt.nodes.new("ShaderNodeBackground")
        out = nt.nodes.new("ShaderNodeOutputWorld")
        nt.links.new(tc.outputs["Generated"], mp.inputs["Vector"])
        nt.links.new(mp.outputs["Vector"], env.inputs["Vector"])
        nt.links.new(env.outputs["Color"], bg.inputs["Color"])
        nt.links.new(bg.outputs["Background"], out.inputs["Surface"])
        self.env, self.env_map, self.env_bg = env, mp, bg
        self.hdris = {}

    def _camera(self) -> None:
        bpy = self.bpy
        cd = bpy.data.cameras.new("cam")
        cd.sensor_fit = "VERTICAL"
        self.cam = bpy.data.objects.new("cam", cd)
        self.scene.collection.objects.link(self.cam)
        self.scene.camera = self.cam

    def _table(self) -> None:
        bpy = self.bpy
        me = bpy.data.meshes.new("table")
        me.from_pydata([(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0)], [], [(0, 1, 2, 3)])
        self.table = bpy.data.objects.new("table", me)
        self.scene.collection.objects.link(self.table)
        mat = bpy.data.materials.new("table")
        _nodes_on(mat)
        nt = mat.node_tree
        bsdf = nt.nodes["Principled BSDF"]
        geo = nt.nodes.new("ShaderNodeNewGeometry")
        mp = nt.nodes.new("ShaderNodeMapping")
        tex = nt.nodes.new("ShaderNodeTexImage")
        tint = nt.nodes.new("ShaderNodeMix")
        tint.data_type = "RGBA"
        tint.blend_type = "MULTIPLY"
        tint.inputs["Factor"].default_value = 1.0
        bump = nt.nodes.new("ShaderNodeBump")
        bump.inputs["Strength"].default_value = 0.15
        bump.inputs["Distance"].default_value = 0.0005
        nt.links.new(geo.outputs["Position"], mp.inputs["Vector"])
        nt.links.new(mp.outputs["Vector"], tex.inputs["Vector"])
        nt.links.new(tex.outputs["Color"], tint.inputs[6])
        nt.links.new(tint.outputs[2], bsdf.inputs["Base Color"])
        nt.links.new(tex.outputs["Color"], bump.inputs["Height"])
        nt.links.new(bump.outputs["Normal"], bsdf.inputs["Normal"])
        self.table.data.materials.append(mat)
        self.table_tex, self.table_map, self.table_tint, self.table_bsdf = tex, mp, tint, bsdf

    def _lamp(self) -> None:
        bpy = self.bpy
        ld = bpy.data.lights.new("lamp", "AREA")
        ld.shape = "DISK"
        self.lamp = bpy.data.objects.new("lamp", ld)
        self.scene.collection.objects.link(self.lamp)

    def _die_object(self, i: int):
        bpy = self.bpy
        me = bpy.data.meshes.new(f"die{i}-empty")
        ob = bpy.data.objects.new(f"die{i}", me)
        self.scene.collection.objects.link(ob)
        self.die_mats.append(self._die_material(i))
        ob.hide_render = True
        return ob

    def _die_material(self, i: int):
        """Plastic, resin or metal body (swirls, speckles, pearl) with paint-filled engraving."""
        mat = self.bpy.data.materials.new(f"die{i}")
        _nodes_on(mat)
        g = _Graph(mat)
        body = g.nodes["Principled BSDF"]
        out = g.nodes["Material Output"]
        uv = g.nodes.new("ShaderNodeUVMap")
        uv.uv_map = "UVMap"
        g.links.new(_body_colour(g), body.inputs["Base Color"])
        _engrave(g, body, uv, out)
        body.inputs["Coat Roughness"].default_value = 0.04
        return mat

    def _box_object(self, name: str, colour, rough: float):
        bpy = self.bpy
        me = bpy.data.meshes.new(name)
        import bmesh

        bm = bmesh.new()
        bmesh.ops.create_cube(bm, size=2.0)
        bm.to_mesh(me)
        bm.free()
        return self._object(name, me, colour, rough)

    def _object(self, name: str, data, colour, rough: float, metal: float = 0.0):
        bpy = self.bpy
        ob = bpy.data.objects.new(name, data)
        self.scene.collection.objects.link(ob)
        mat = bpy.data.materials.new(name)
        _nodes_on(mat)
        b = mat.node_tree.nodes["Principled BSDF"]
        b.inputs["Base Color"].default_value = (*colour, 1)
        b.inputs["Roughness"].default_value = rough
        b.inputs["Metallic"].default_value = metal
        ob.data.materials.append(mat)
        ob.hide_render = True
        return ob

    # ------------------------------------------------------------ meshes
    def die_mesh(self, kind: str, style: str):
        """The bevelled die with per-face atlas uvs (built once per kind and style)."""
        key = (kind, style)
        if key in self.meshes:
            return self.meshes[key]
        import bmesh

        mesh = geometry.build(kind, style)
        uvs = faces.atlas_uvs(kind, style)
        bm = bmesh.new()
        verts = [bm.verts.new(tuple(v)) for v in mesh.vertices]
        layer = bm.loops.layers.uv.new("UVMap")
        for f, fuv in zip(mesh.faces, uvs):
            face = bm.faces.new([verts[i] for i in f.verts])
            face.smooth = False
            for loop, (u, v) in zip(face.loops, fuv):
                loop[layer].uv = (u, 1 - v)
        bm.normal_update()
        res = bmesh.ops.bevel(bm, geom=list(bm.edges) + list(bm.verts), offset=BEVEL[kind], offset_type="OFFSET",
                              segments=3, profile=0.5, affect="EDGES", clamp_overlap=True)
        for f in res["faces"]:
            f.smooth = True
        me = self.bpy.data.meshes.new(f"{kind}-{style}")
        bm.to_mesh(me)
        me.materials.append(None)  # one slot; each die object links its own material into it
        self.hulls[key] = np.array([v.co[:] for v in bm.verts], float)
        bm.free()
        self.meshes[key] = me
        return me

    def hull(self, kind: str, style: str) -> np.ndarray:
        self.die_mesh(kind, style)
        return self.hulls[(kind, style)]

    def ink_image(self, d: Die):
        lk = d.look
        key = (d.kind, d.style, lk.font, lk.weight, round(lk.size, 2), lk.mark)
        if key in self.images:
            self.images.move_to_end(key)
            return self.images[key]
        a = faces.ink_atlas(d.kind, d.style, lk.font, lk.weight, round(lk.size, 2), lk.mark)
        a = cv2.GaussianBlur(a, (0, 0), 0.8)  # the engraving's rounded walls
        h, w = a.shape
        img = self.bpy.data.images.new(f"ink{len(self.images)}", w, h, alpha=False, float_buffer=False)
        img.colorspace_settings.name = "Non-Color"
        px = np.ones((h, w, 4), np.float32)
        px[..., :3] = np.flipud(a)[..., None]
        img.pixels.foreach_set(px.ravel())
        img.pack()
        self.images[key] = img
        if len(self.images) > MAX_IMAGES:
            # The oldest atlas is not on any die of this frame (those were just touched): drop
            # the stale references the pooled materials keep, then the image itself.
            _, old = self.images.popitem(last=False)
            for mat in self.die_mats:
                if mat.node_tree.nodes["ink"].image == old:
                    mat.node_tree.nodes["ink"].image = None
            self.bpy.data.images.remove(old)
        return img

    # ------------------------------------------------------------ dressing
    def dress(self, s: Scene) -> None:
        sc = self.scene
        sc.render.resolution_x, sc.render.resolution_y = s.width, s.height
        sc.render.resolution_percentage = 100
        cam = s.camera
        M = np.linalg.inv(cam.view)
        M[:3, 3] *= MM
        self.cam.matrix_world = _matrix(M)
        self.cam.data.angle = cam.fovy
        self.cam.data.dof.use_dof = s.fstop is not None
        if s.fstop is not None:
            focus = s.dice[0].pos if s.dice else cam.target  # the photographer focuses on a die
            self.cam.data.dof.focus_distance = float(np.linalg.norm(cam.eye - focus)) * MM
            self.cam.data.dof.aperture_fstop = s.fstop
        dist = float(np.linalg.norm(cam.eye - cam.target)) * MM
        self.cam.data.clip_start = dist * 0.02
        self.cam.data.clip_end = dist * 40
        # The table reaches well past the horizon of the steepest view.
        self.table.location = (cam.target[0] * MM, cam.target[1] * MM, 0)
        self.table.scale = (dist * 30, dist * 30, 1)
        self._dress_world(s)
        self._dress_table(s)
        self._dress_lamp(s)
        for ob, d in zip(self.dice, s.dice):
            self._dress_die(ob, d)
        for ob in self.dice[len(s.dice):]:
            ob.hide_render = True
        self._dress_props(s)
        for ob, wall in zip(self.walls, s.walls if s.walls else []):
            (cx, cy, cz), (hx, hy, hz) = wall
            ob.location = (cx * MM, cy * MM, cz * MM)
            ob.scale = (hx * MM, hy * MM, hz * MM)
            ob.data.materials[0].node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*s.wall_colour, 1)
            ob.hide_render = False
        for ob in self.walls[len(s.walls):]:
            ob.hide_render = True

    def _dress_world(self, s: Scene) -> None:
        if s.hdri not in self.hdris:
            self.hdris[s.hdri] = self.bpy.data.images.load(str(hdri_path(s.hdri)))
        self.env.image = self.hdris[s.hdri]
        self.env_map.inputs["Rotation"].default_value = (0, 0, s.hdri_yaw)
        self.env_bg.inputs["Strength"].default_value = s.hdri_strength

    def _dress_table(self, s: Scene) -> None:
        if s.surface not in self.surfaces:
            _, rgb = surface_image(s.surface)
            h, w = rgb.shape[:2]
            img = self.bpy.data.images.new(f"surface{s.surface}", w, h, alpha=False)
            px = np.ones((h, w, 4), np.float32)
            px[..., :3] = np.flipud(rgb.astype(np.float32) / 255)
            img.pixels.foreach_set(px.ravel())
            img.pack()
            self.surfaces[s.surface] = img
        self.table_tex.image = self.surfaces[s.surface]
        k = 1 / (s.surface_mm * MM)
        self.table_map.inputs["Scale"].default_value = (k, k, 1)
        self.table_map.inputs["Rotation"].default_value = (0, 0, s.surface_yaw)
        self.table_tint.inputs[7].default_value = (*s.surface_tint, 1)
        kind = SURFACES[(s.surface // PER_KIND) % len(SURFACES)]
        rough = {"glass": 0.15, "paper": 0.8, "wood": 0.45, "battlemap": 0.6, "neoprene": 0.85}.get(kind, 0.9)
        self.table_bsdf.inputs["Roughness"].default_value = rough
        self.table_bsdf.inputs["Coat Weight"].default_value = 0.3 if kind == "wood" else 0.0

    def _dress_lamp(self, s: Scene) -> None:
        if s.lamp is None:
            self.lamp.hide_render = True
            return
        x, y, z, size, power = s.lamp
        self.lamp.hide_render = False
        self.lamp.location = (x * MM, y * MM, z * MM)
        t = s.camera.target * MM
        d = np.array([t[0] - x * MM, t[1] - y * MM, -z * MM])
        self.lamp.rotation_euler = _track_euler(d)
        self.lamp.data.size = size * MM
        self.lamp.data.energy = 40.0 * power
        w = s.lamp_warmth
        self.lamp.data.color = (1.0 + 0.1 * w, 1.0, 1.0 - 0.3 * w) if w > 0 else (1.0 + 0.05 * w, 1.0, 1.0)

    def _dress_die(self, ob, d: Die) -> None:
        ob.data = self.die_mesh(d.kind, d.style)
        mat = self.die_mats[self.dice.index(ob)]
        ob.material_slots[0].link = "OBJECT"
        ob.material_slots[0].material = mat
        M = np.eye(4)
        M[:3, :3] = d.R * d.scale * MM
        M[:3, 3] = d.pos * MM
        ob.matrix_world = _matrix(M)
        ob.hide_render = False
        N = mat.node_tree.nodes
        lk = d.look
        N["body"].outputs[0].default_value = (*lk.body, 1)
        N["body2"].outputs[0].default_value = (*lk.body2, 1)
        N["body3"].outputs[0].default_value = (*lk.body3, 1)
        N["speck"].outputs[0].default_value = (*lk.body2, 1)
        for n in ("noise1", "noise2"):
            N[n].inputs["W"].default_value = lk.seed + (37.0 if n == "noise2" else 0.0)
            N[n].inputs["Scale"].default_value = lk.swirl_scale
            N[n].inputs["Distortion"].default_value = 0.5 + 2.5 * lk.swirl_sharp
        # Band edges: soft clouds when swirl_sharp is 0, crisp marble veins when 1.
        half = 0.2 * (1 - lk.swirl_sharp) + 0.02
        for n, mid in (("band1", 0.55), ("band2", 0.62)):
            N[n].inputs["From Min"].default_value = mid - half
            N[n].inputs["From Max"].default_value = mid + half
        m = lk.material
        N["amt2"].inputs[1].default_value = {"swirl2": 1.0, "swirl3": 1.0, "pearl": 0.8, "speckled": 0.0}.get(m, 0.0)
        N["amt3"].inputs[1].default_value = {"swirl3": 1.0, "speckled": 0.7}.get(m, 0.0)
        N["amt_speck"].inputs[1].default_value = 1.0 if m == "speckled" else 0.0
        N["speckles"].inputs["Scale"].default_value = 14 + 20 * lk.swirl_sharp
        N["speck_size"].inputs["From Min"].default_value = 0.10
        N["speck_size"].inputs["From Max"].default_value = 0.16
        body = N["Principled BSDF"]
        body.inputs["Roughness"].default_value = lk.roughness
        body.inputs["Metallic"].default_value = 1.0 if m == "metal" else 0.0
        body.inputs["Coat Weight"].default_value = lk.coat
        body.inputs["Transmission Weight"].default_value = 1.0 if m == "gem" else 0.0
        body.inputs["Sheen Weight"].default_value = 0.6 if m == "pearl" else 0.0
        body.inputs["Thin Film Thickness"].default_value = 350.0 if m == "pearl" else 0.0
        body.inputs["Subsurface Weight"].default_value = 0.0
        ink = N["ink"]
        ink.image = self.ink_image(d)
        drilled = d.style == "pips" and lk.pip_style == "drilled"
        N["engrave"].inputs[1].default_value = 1.0 if drilled else lk.engrave
        paint = N["paint"]
        rgb, metal = PAINTS[lk.paint]
        col = lk.paint_rgb
        if drilled:  # a drilled pip is a dark hole with a little paint at its bottom
            col = tuple(float(c) * 0.25 for c in col)
        N["paint_rgb"].outputs[0].default_value = (*col, 1)
        paint.inputs["Metallic"].default_value = metal
        paint.inputs["Roughness"].default_value = 0.3 if metal else 0.5

    def _pool(self, name: str, k: int):
        pool = self.pools.setdefault(name, [])
        while len(pool) <= k:
            pool.append(self._make_prop(name, len(pool)))
        return pool[k]

    def _make_prop(self, name: str, i: int):
        bpy = self.bpy
        import bmesh

        tag = f"{name}{i}"
        if name == "cable":
            cu = bpy.data.curves.new(tag, "CURVE")
            cu.dimensions = "3D"
            cu.bevel_depth = 1.0
            cu.bevel_resolution = 3
            sp = cu.splines.new("NURBS")
            sp.points.add(5)
            sp.use_endpoint_u = True
            sp.order_u = 4
            return self._object(tag, cu, (0.02, 0.02, 0.02), 0.4)
        bm = bmesh.new()
        if name in ("pen", "coin", "token"):
            bmesh.ops.create_cone(bm, cap_ends=True, segments=32, radius1=1.0, radius2=1.0, depth=2.0)
            if name == "pen":  # along y
                bmesh.ops.rotate(bm, verts=bm.verts, cent=(0, 0, 0), matrix=_rot_x90())
        elif name == "mini":
            bmesh.ops.create_cone(bm, cap_ends=True, segments=32, radius1=1.0, radius2=1.0, depth=0.25,
                                  matrix=_translate(0, 0, -0.875))
            bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=12, radius=0.45, matrix=_translate(0, 0, 0.2))
            bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=0.45, radius2=0.3, depth=1.0,
                                  matrix=_translate(0, 0, -0.3))
        elif name == "laptop":
            bmesh.ops.create_cube(bm, size=2.0)
            # A grid of keys on top, towards the back of the deck.
            for r in range(5):
                for c in range(13):
                    bmesh.ops.create_cube(bm, size=1.0, matrix=_key_matrix(r, c))
        else:  # card
            bmesh.ops.create_cube(bm, size=2.0)
        me = bpy.data.meshes.new(tag)
        bm.to_mesh(me)
        bm.free()
        metal = 1.0 if name == "coin" else 0.0
        return self._object(tag, me, (0.5, 0.5, 0.5), 0.35 if name != "card" else 0.6, metal)

    def _dress_props(self, s: Scene) -> None:
        used: dict[str, int] = {}
        for p in s.props:
            k = used.get(p.name, 0)
            used[p.name] = k + 1
            ob = self._pool(p.name, k)
            ob.hide_render = False
            b = ob.data.materials[0].node_tree.nodes["Principled BSDF"]
            b.inputs["Base Color"].default_value = (*p.colour, 1)
            if p.name == "cable":
                sp = ob.data.splines[0]
                for pt, q in zip(sp.points, p.path):
                    pt.co = (q[0] * MM, q[1] * MM, p.size[0] * MM, 1.0)
                ob.data.bevel_depth = p.size[0] * MM
                ob.location = (0, 0, 0)
                continue
            ob.location = (p.pos[0] * MM, p.pos[1] * MM, p.size[2] * MM)
            ob.rotation_euler = (0, 0, p.yaw)
            ob.scale = tuple(float(x) * MM for x in p.size)
        for name, pool in self.pools.items():
            for ob in pool[used.get(name, 0):]:
                ob.hide_render = True

    # ------------------------------------------------------------ render
    def render_linear(self, s: Scene, seed: int = 0) -> np.ndarray:
        """Linear RGB float32 (H, W, 3) of the scene, as Cycles traced it."""
        self.dress(s)
        self.scene.cycles.seed = seed % (2**31)
        path = self._tmp / "frame.exr"
        self.scene.render.filepath = str(path)
        with _quiet():
            self.bpy.ops.render.render(write_still=True)
        img = self.bpy.data.images.load(str(path))
        try:
            w, h = img.size
            px = np.empty(w * h * img.channels, np.float32)
            img.pixels.foreach_get(px)
        finally:
            self.bpy.data.images.remove(img)
        return np.flipud(px.reshape(h, w, -1)[..., :3])

    def render(self, s: Scene, seed: int = 0) -> np.ndarray:
        """BGR uint8 image of the scene, exposed like a photo."""
        return np.ascontiguousarray(expose(self.render_linear(s, seed), s.exposure)[..., ::-1])


    def die_mask(self, s: Scene) -> np.ndarray:
        """Coverage (uint8, 0-255) of the dice alone, as the camera sees them: for checking boxes."""
        return self._dice_alone(s, ink=False)[..., 3]

    def ink_and_cover(self, s: Scene) -> tuple[np.ndarray, np.ndarray]:
        """Where the camera sees the dice's paint (numerals and pips: float32, 0-1) and the dice's coverage
        (uint8, 0-255), each pixel of the frame: what `legibility.numeral_contrast` compares the picture by."""
        px = self._dice_alone(s, ink=True)
        return px[..., 2].astype(np.float32) / 255, px[..., 3]

    def _dice_alone(self, s: Scene, ink: bool) -> np.ndarray:
        """The dice alone on a transparent film (BGRA uint8): shaded as ever, or (ink) glowing white where
        painted and black elsewhere, so that no light, gem or reflection changes where the paint is."""
        self.dress(s)
        hidden = [self.table, self.lamp, *self.walls, *(ob for pool in self.pools.values() for ob in pool)]
        was = [ob.hide_render for ob in hidden]
        r, cy = self.scene.render, self.scene.cycles
        keep = (r.film_transparent, r.image_settings.color_mode, cy.samples, cy.use_denoising)
        shaded = []
        try:
            for ob in hidden:
                ob.hide_render = True
            if ink:
                for mat in self.die_mats[: len(s.dice)]:
                    N, out = mat.node_tree.nodes, mat.node_tree.nodes["Material Output"].inputs["Surface"]
                    shaded.append((mat, out.links[0].from_socket))
                    mat.node_tree.links.new(N["ink_glow"].outputs["Emission"], out)
            r.film_transparent, r.image_settings.color_mode, cy.samples, cy.use_denoising = True, "RGBA", 4, False
            r.image_settings.file_format, r.image_settings.color_depth = "PNG", "8"
            path = self._tmp / "mask.png"
            r.filepath = str(path)
            with _quiet():
                self.bpy.ops.render.render(write_still=True)
            return cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        finally:
            for mat, src in shaded:
                mat.node_tree.links.new(src, mat.node_tree.nodes["Material Output"].inputs["Surface"])
            for ob, h in zip(hidden, was):
                ob.hide_render = h
            r.film_transparent, r.image_settings.color_mode, cy.samples, cy.use_denoising = keep
            r.image_settings.file_format, r.image_settings.color_depth = "OPEN_EXR", "16"


def _nodes_on(idblock) -> None:
    # Blender 5 always uses nodes and warns that the switch will go; 4.x needs it turned on.
    import bpy

    if bpy.app.version < (5, 0, 0):
        idblock.use_nodes = True


def _matrix(M: np.ndarray):
    from mathutils import Matrix

    return Matrix([list(map(float, r)) for r in M])


def _translate(x: float, y: float, z: float):
    from mathutils import Matrix

    return Matrix.Translation((x, y, z))


def _rot_x90():
    from mathutils import Matrix

    return Matrix.Rotation(np.pi / 2, 3, "X")


def _key_matrix(r: int, c: int):
    from mathutils import Matrix

    # Keys in the deck's unit-cube frame: x across, y front (-1) to back (+1), on top (z = 1).
    x = -0.84 + c * 0.14
    y = -0.05 + r * 0.2
    return Matrix.Translation((x, y, 1.02)) @ Matrix.Diagonal((0.12, 0.16, 0.06, 1.0))


def _track_euler(d: np.ndarray):
    """Euler angles that turn a light's -Z axis towards direction d."""
    from mathutils import Vector

    return Vector(tuple(float(x) for x in d)).to_track_quat("-Z", "Y").to_euler()


class _Graph:
    """One material's shader nodes, with the few shapes of node a die's material is built from. Nodes are
    named where the sampler sets them per die (`body`, `noise1`, `band1`, `amt2`, `ink`, `paint_rgb`...)."""

    def __init__(self, mat):
        self.nodes, self.links = mat.node_tree.nodes, mat.node_tree.links
        self.coords = self.nodes.new("ShaderNodeTexCoord")

    def rgb(self, name: str):
        n = self.nodes.new("ShaderNodeRGB")
        n.name = name
        return n

    def noise(self, name: str):
        n = self.nodes.new("ShaderNodeTexNoise")
        n.noise_dimensions = "4D"
        n.name = name
        n.inputs["Detail"].default_value = 5.0
        n.inputs["Roughness"].default_value = 0.55
        self.links.new(self.coords.outputs["Object"], n.inputs["Vector"])
        return n

    def band(self, src, range_name: str, amt_name: str):
        """A clamped map range of `src` times an amount: how much of one colour shows where."""
        mr = self.nodes.new("ShaderNodeMapRange")
        mr.name = range_name
        mr.clamp = True
        self.links.new(src, mr.inputs["Value"])
        mul = self.nodes.new("ShaderNodeMath")
        mul.operation = "MULTIPLY"
        mul.name = amt_name
        self.links.new(mr.outputs["Result"], mul.inputs[0])
        return mr, mul

    def mix(self, a, b, fac):
        m = self.nodes.new("ShaderNodeMix")
        m.data_type = "RGBA"
        self.links.new(fac, m.inputs["Factor"])
        self.links.new(a, m.inputs[6])
        self.links.new(b, m.inputs[7])
        return m.outputs[2]


def _body_colour(g: _Graph):
    """The body's colour: up to three colours swirled by two noises, then speckles (a Voronoi's spots)."""
    c1, c2, c3, speck = g.rgb("body"), g.rgb("body2"), g.rgb("body3"), g.rgb("speck")
    n1, n2 = g.noise("noise1"), g.noise("noise2")
    _, f1 = g.band(n1.outputs["Fac"], "band1", "amt2")
    _, f2 = g.band(n2.outputs["Fac"], "band2", "amt3")
    vor = g.nodes.new("ShaderNodeTexVoronoi")
    vor.name = "speckles"
    g.links.new(g.coords.outputs["Object"], vor.inputs["Vector"])
    mrs, fs = g.band(vor.outputs["Distance"], "speck_size", "amt_speck")
    mrs.inputs["To Min"].default_value = 1.0  # near a speckle's centre: full speckle colour
    mrs.inputs["To Max"].default_value = 0.0
    col = g.mix(c1.outputs[0], c2.outputs[0], f1.outputs[0])
    col = g.mix(col, c3.outputs[0], f2.outputs[0])
    return g.mix(col, speck.outputs[0], fs.outputs[0])


def _engrave(g: _Graph, body, uv, out) -> None:
    """The numerals engraved (a bump from the ink image) and filled with paint, mixed over the body."""
    N, L = g.nodes, g.links
    ink = N.new("ShaderNodeTexImage")
    ink.name = "ink"
    ink.interpolation = "Cubic"
    ink.extension = "EXTEND"
    L.new(uv.outputs["UV"], ink.inputs["Vector"])
    depth = N.new("ShaderNodeMath")
    depth.operation = "MULTIPLY"
    depth.name = "engrave"
    L.new(ink.outputs["Color"], depth.inputs[0])
    bump = N.new("ShaderNodeBump")
    bump.invert = True
    bump.inputs["Distance"].default_value = 0.0004
    L.new(depth.outputs[0], bump.inputs["Height"])
    L.new(bump.outputs["Normal"], body.inputs["Normal"])
    L.new(bump.outputs["Normal"], body.inputs["Coat Normal"])
    paint = N.new("ShaderNodeBsdfPrincipled")
    paint.name = "paint"
    paint.inputs["Roughness"].default_value = 0.45
    L.new(bump.outputs["Normal"], paint.inputs["Normal"])
    pr = g.rgb("paint_rgb")
    L.new(pr.outputs[0], paint.inputs["Base Color"])
    mixs = N.new("ShaderNodeMixShader")
    L.new(ink.outputs["Color"], mixs.inputs["Fac"])
    L.new(body.outputs["BSDF"], mixs.inputs[1])
    L.new(paint.outputs["BSDF"], mixs.inputs[2])
    L.new(mixs.outputs["Shader"], out.inputs["Surface"])
    glow = N.new("ShaderNodeEmission")  # the paint alone, for Stage.ink_and_cover; linked only there
    glow.name = "ink_glow"
    L.new(ink.outputs["Color"], glow.inputs["Color"])
