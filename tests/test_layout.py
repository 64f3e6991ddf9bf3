"""The folders import downward only: mechanics, vision, datasets, models, server — each may import
itself and the folders before it, never one after it, at module level or inside a function.

The rule is checked by reading every import in the source (ast), not by a list of known exceptions.
What a folder may hold is checked the same way: the rules engine defines no type of the live stream.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("mechanics", "vision", "datasets", "models", "server")


def _module_name(root: Path, path: Path) -> list[str]:
    parts = ["dicecam", *path.relative_to(root).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(node: ast.AST, module: list[str], is_package: bool) -> list[str]:
    """The absolute module names one import statement (or import_module("...") call) reaches."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            package = module if is_package else module[:-1]
            base = package[: len(package) - (node.level - 1)]
        else:
            base = []
        stem = ".".join(base + ([node.module] if node.module else []))
        # `from dicecam import server` reaches dicecam.server: each name may be a module.
        return [stem] + [f"{stem}.{a.name}" for a in node.names]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def upward_imports(root: Path) -> list[str]:
    """'file:line imports dicecam.X' for every import of a folder that comes later in ORDER."""
    found = []
    for rank, folder in enumerate(ORDER):
        for path in sorted((root / folder).rglob("*.py")):
            module = _module_name(root, path)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):  # every node: module level, in functions, in classes
                for name in _imported(node, module, path.name == "__init__.py"):
                    parts = name.split(".")
                    if parts[0] == "dicecam" and len(parts) > 1 and parts[1] in ORDER and ORDER.index(parts[1]) > rank:
                        found.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
                        break  # one line per import statement
    return sorted(found)


def test_no_folder_imports_a_folder_after_it():
    assert upward_imports(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for folder in ORDER:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("name, text", [
    ("mechanics/rules.py", "from dicecam.vision import read\n"),
    ("mechanics/rules.py", "import dicecam.server.cli as cli\n"),
    ("vision/read.py", "def f():\n    from dicecam.datasets.scene import render_image\n"),
    ("vision/read.py", "from ..server import app\n"),
    ("vision/sub/deep.py", "from ...models import recipe\n"),
    ("datasets/scene.py", "class A:\n    def f(self):\n        from dicecam import models\n"),
    ("models/recipe.py", "import importlib\nimportlib.import_module('dicecam.server.cli')\n"),
])
def test_an_upward_import_anywhere_in_a_file_is_found(tmp_path, name, text):
    root = _tree(tmp_path, {name: text})
    (found,) = upward_imports(root)
    assert found.startswith(name)


@pytest.mark.parametrize("name, text", [
    ("server/cli.py", "from dicecam.mechanics.errors import DicecamError\nfrom ..vision import read\n"),
    ("models/recipe.py", "from dicecam.datasets.synth import generate\nfrom .data import CropSet\n"),
    ("vision/read.py", "from . import crops\nfrom .crops import KINDS\nimport numpy\n"),
    ("datasets/photoreal/run.py", "from .. import effects\nfrom ..scene import check_size\n"),
])
def test_imports_of_the_same_folder_or_an_earlier_one_are_allowed(tmp_path, name, text):
    assert upward_imports(_tree(tmp_path, {name: text})) == []


def _loaded_after(code: str) -> list[str]:
    check = (f"{code}\nimport sys\n"
             "print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[:2][-1] in "
             f"{ORDER[1:]!r} and m.startswith('dicecam.'))))")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.split()


def test_importing_mechanics_loads_nothing_from_the_other_folders():
    assert _loaded_after("import dicecam.mechanics") == []


def test_importing_every_mechanics_module_loads_nothing_from_the_other_folders():
    code = ("import importlib, pkgutil, dicecam.mechanics as m\n"
            "for i in pkgutil.walk_packages(m.__path__, 'dicecam.mechanics.'): importlib.import_module(i.name)")
    assert _loaded_after(code) == []


# -- what each folder holds ----------------------------------------------------------------------
STREAM_TYPES = re.compile(r"Event|Camera|Snapshot|TableConfig|Stream|Envelope")


def _nodes(root: Path, folder: str):
    """(path, node) for every syntax node of every .py file in `folder`, files in order."""
    for path in sorted((root / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            yield path, node


def stream_types_in(root: Path) -> list[str]:
    """'file:line Class' for each class in mechanics/ named like a type of the live stream."""
    return [f"{path.relative_to(root)}:{node.lineno} {node.name}" for path, node in _nodes(root, "mechanics")
            if isinstance(node, ast.ClassDef) and STREAM_TYPES.search(node.name)]


def test_the_rules_engine_defines_no_stream_or_camera_type():
    """The stream's types live where the stream is made (vision/stream.py) or served (server/events.py)."""
    assert stream_types_in(ROOT) == []


def test_a_stream_type_in_mechanics_is_found(tmp_path):
    root = _tree(tmp_path, {"mechanics/roll.py": "class Roll:\n    pass\nclass CameraStatus:\n    pass\n"})
    assert stream_types_in(root) == ["mechanics/roll.py:3 CameraStatus"]


MAX_RULE_LINES = 60


def long_functions(root: Path, folder: str = "mechanics", limit: int = MAX_RULE_LINES) -> list[str]:
    """'file:line name (N lines)' for each function in `folder` longer than `limit` lines, decorators excluded."""
    return [f"{path.relative_to(root)}:{node.lineno} {node.name} ({n} lines)" for path, node in _nodes(root, folder)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (n := node.end_lineno - node.lineno + 1) > limit]


def test_no_rule_function_is_longer_than_sixty_lines():
    """A resolver scores, then explains, in functions short enough to read whole."""
    assert long_functions(ROOT) == []


def test_a_long_function_is_found(tmp_path):
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_RULE_LINES))
    root = _tree(tmp_path, {"mechanics/rules.py": f"def short():\n    pass\n\nclass A:\n    def long(self):\n{body}"})
    assert long_functions(root) == [f"mechanics/rules.py:5 long ({MAX_RULE_LINES + 1} lines)"]


CITED = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:py|md))\b")


def missing_citations(root: Path) -> list[str]:
    """'file:line name' for each .py or .md file named in the source that the repository does not have
    (by its path from the root, from the citing file's folder, or, for a bare name, anywhere)."""
    have = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".py", ".md")
            and not any(part.startswith(".") or part == "build" for part in p.relative_to(root).parts)}
    names = {h.rsplit("/", 1)[-1] for h in have}
    found = []
    for folder in ORDER:
        for path in sorted((root / folder).rglob("*.py")):
            here = path.parent.relative_to(root).as_posix()
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for ref in CITED.findall(line):
                    if not (ref in have or f"{here}/{ref}" in have or any(h.endswith("/" + ref) for h in have)
                            or ("/" not in ref and ref in names)):
                        found.append(f"{path.relative_to(root)}:{i} {ref}")
    return found


def test_no_comment_cites_a_file_the_project_does_not_have():
    assert missing_citations(ROOT) == []


def test_a_citation_of_a_missing_file_is_found(tmp_path):
    root = _tree(tmp_path, {"vision/pipeline.py": "# the shape in ARCHITECTURE.md; see vision/pipeline.py\n"})
    assert missing_citations(root) == ["vision/pipeline.py:1 ARCHITECTURE.md"]


def test_every_package_folder_is_installed():
    """A subfolder with an __init__.py (server/routes/, server/commands/...) is in pyproject's packages, or a
    wheel built from the project would leave it out (an editable install finds it anyway)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(_module_name(ROOT, init)) for folder in ORDER for init in (ROOT / folder).rglob("__init__.py")}
    assert found - listed == set()
