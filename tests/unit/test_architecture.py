"""The architecture's rules that code can check (architecture.md, "One core, thin shells"): the shells use the
core's public names only, notebooks the library's public API, and every name `registry` exports is
documented. bench/ and tools/ measure and compile the core's internals, like tests, so they are not shells
here."""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import registry

ROOT = Path(__file__).resolve().parents[2]
SHELLS = ("app", "cli", "server", "pipeline")


def _shell_sources() -> Iterator[tuple[str, str]]:
    """(where, Python source) of every shell module."""
    for shell in SHELLS:
        for path in sorted((ROOT / shell).rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def _notebook_sources() -> Iterator[tuple[str, str]]:
    """(where, Python source) of every notebook code cell."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                code = "".join(cell["source"])
                lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
                yield f"{path.relative_to(ROOT)} cell {number}", "\n".join(lines)


def _private_core_imports(source: str, *, modules_too: bool) -> list[str]:
    """The private core names `source` imports: a name starting with `_` (`from registry._state import _live`,
    `from registry import _seed`) or a private module whole (`import registry._model`), and with `modules_too`
    any import from a private module (`from registry.storage._snapshot import x`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            names: list[str] = []
            whole = True
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules = [node.module or ""]
            names = [alias.name for alias in node.names] if modules[0].split(".")[0] == "registry" else []
            whole = False
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == "registry" and any(part.startswith("_") for part in parts[1:]) and (modules_too or whole):
                found.append(module)
        found += [f"{modules[0]}.{name}" for name in names if name.startswith("_")]
    return found


def test_the_scan_finds_a_private_import() -> None:
    code = "import registry._model\nfrom registry.storage._snapshot import x, _y\nfrom registry import _seed, open\n"
    assert _private_core_imports(code, modules_too=True) == [
        "registry._model",
        "registry.storage._snapshot",
        "registry.storage._snapshot._y",
        "registry._seed",
    ]
    assert _private_core_imports(code, modules_too=False) == [
        "registry._model",
        "registry.storage._snapshot._y",
        "registry._seed",
    ]


@pytest.mark.parametrize(("where", "source"), list(_shell_sources()), ids=lambda v: v if "\n" not in v else "")
def test_no_shell_imports_a_private_core_name(where: str, source: str) -> None:
    """The project's shells import what `registry` exports, and the core's other public names from the module
    that defines them (`from registry._catalog import IndexStatus`): never a name starting with `_`, nor a
    private module whole."""
    assert _private_core_imports(source, modules_too=False) == [], f"{where} imports private core names"


@pytest.mark.parametrize(("where", "source"), list(_notebook_sources()), ids=lambda v: v if "\n" not in v else "")
def test_the_notebooks_use_the_librarys_public_api_only(where: str, source: str) -> None:
    """A notebook is what a user of the library writes: `registry`'s names and its public subpackages."""
    assert _private_core_imports(source, modules_too=True) == [], f"{where} imports from private core modules"


@pytest.mark.parametrize("name", sorted(set(registry.__all__)))
def test_every_public_name_exists_and_callables_say_what_they_are_for(name: str) -> None:
    value = getattr(registry, name)
    if callable(value):
        doc = value.__doc__ or ""
        assert doc.strip() and doc is not type.__doc__, f"registry.{name} has no docstring"


def test_all_lists_each_public_name_once() -> None:
    assert len(registry.__all__) == len(set(registry.__all__))


CORE = ROOT / "registry"
PRESENTATION = ("pandas", "altair", "streamlit", "IPython", "registry.views")


def _core_modules() -> dict[str, ast.Module]:
    """Every core module (registry/ without its views package) by dotted name, parsed."""
    modules = _package_modules("registry")
    return {name: tree for name, tree in modules.items() if name.split(".")[:2] != ["registry", "views"]}


@functools.cache  # parsed and walked once for the module's tests, which only read them
def _imports(name: str, tree: ast.Module) -> set[str]:
    """The modules `name` imports anywhere but under `if TYPE_CHECKING:`, relative imports resolved."""
    package = name if name == "registry" else name.rsplit(".", 1)[0]
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_the_core_imports_no_presentation() -> None:
    for name, tree in _core_modules().items():
        bad = sorted(m for m in _imports(name, tree) if m.split(".")[0] in PRESENTATION or m.startswith(PRESENTATION))
        assert bad == [], f"{name} imports {bad}: presentation belongs in registry/views"


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle in `graph` (module -> modules it imports), or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node], stack[len(stack) :] = 1, [node]
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_the_core_import_graph_has_no_cycles() -> None:
    """The package's __init__ re-exports the facade and is imported by nobody inside the core; its modules
    import each other only one way, so any unit can be read, tested and moved without dragging in a circle."""
    modules = _core_modules()
    graph = {
        name: {m for m in _imports(name, tree) if m in modules and m != name and m != "registry"}
        for name, tree in modules.items()
    }
    assert _cycle(graph) == []


@functools.cache  # parsed and walked once for the module's tests, which only read them
def _package_modules(package: str) -> dict[str, ast.Module]:
    modules = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = ast.parse(path.read_text("utf-8"))
    return modules


@pytest.mark.parametrize("package", SHELLS)
def test_no_shell_has_an_import_cycle(package: str) -> None:
    """Each shell's modules import each other one way too, late imports inside functions included (a late
    import that hides a cycle is still a cycle); a package's __init__ is left out, as for the core."""
    modules = _package_modules(package)
    graph = {
        name: {m for m in _imports(name, tree) if m in modules and m != name and m != package}
        for name, tree in modules.items()
    }
    assert _cycle(graph) == []


@pytest.mark.parametrize("package", ("registry", *SHELLS))
def test_every_folder_of_code_is_a_regular_package(package: str) -> None:
    """Spark executors import registry/ and pipeline/ from a zip (pipeline/_spark.py `code_archive`), and
    zipimport finds no namespace package: a folder of modules without `__init__.py` imports here and fails on
    a cluster (registry/proposals did, caught only by the Spark tests)."""
    folders = {path.parent for path in (ROOT / package).rglob("*.py")}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists()) == []


def test_no_core_class_is_longer_than_about_400_lines() -> None:
    """A class is a unit a newcomer reads whole; past ~400 lines it is several units and should be split."""
    long = []
    for name, tree in _core_modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno and node.end_lineno - node.lineno >= 450:
                long.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long == []


def test_the_layout_page_of_the_guide_names_every_core_module() -> None:
    """The guide's Layout (docs/guide/layout.md) lists the core by concept; a module added or moved must be
    placed there too."""
    layout = (ROOT / "docs" / "guide" / "layout.md").read_text(encoding="utf-8")
    missing = [
        path.relative_to(CORE).as_posix()
        for path in sorted(CORE.rglob("*.py"))
        if path.name != "__init__.py" and path.name not in layout
    ]
    assert missing == [], f"docs/guide/layout.md does not name {missing}"


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _documented_layers() -> list[tuple[str, set[str]]]:
    """docs/architecture.md's "Layers" list, bottom first: (layer name, its units), a unit being a top-level
    module (`_model.py` -> "_model") or a subpackage (`avro/` -> "avro") of registry/."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("\n## Layers\n") :]
    section = section[: section.index("\n## ", 1)]
    layers: list[tuple[str, set[str]]] = []
    for item in re.split(r"\n(?=\d+\. )", section)[1:]:
        head = re.match(r"\d+\. \*\*(.+?)\*\*:", item)
        assert head, f"architecture.md's Layers list has an item without a bold name: {item[:60]!r}"
        units = re.findall(r"`([^`]+)`", item)
        bad = [u for u in units if not re.fullmatch(r"\w+\.py|\w+/", u)]
        assert bad == [], f"layer {head[1]!r} names {bad}: write units as `_module.py` or `package/`"
        layers.append((head[1], {u.removesuffix(".py").removesuffix("/") for u in units}))
    return layers


def _unit(module: str) -> str:
    """A core module's unit: its subpackage, or itself for a top-level module ("registry.avro._diff" -> "avro")."""
    return module.split(".")[1]


def _upward_imports(graph: dict[str, set[str]], layer: dict[str, int]) -> list[tuple[str, str]]:
    """(importer, imported) for every import from a unit into a unit of a higher layer."""
    return sorted(
        (name, imported)
        for name, imports in graph.items()
        for imported in imports
        if _unit(imported) != _unit(name) and layer[_unit(imported)] > layer[_unit(name)]
    )


def test_the_layer_check_finds_an_upward_import() -> None:
    layer = {"_model": 0, "storage": 1, "_registry": 2}
    graph = {
        "registry.storage._sql": {"registry._model", "registry.storage._base"},
        "registry.storage._snapshot": {"registry._registry"},
        "registry._registry": {"registry.storage._sql"},
    }
    assert _upward_imports(graph, layer) == [("registry.storage._snapshot", "registry._registry")]


def test_every_core_unit_has_one_documented_layer() -> None:
    """A unit added to registry/ is placed in docs/architecture.md's Layers list, once; a unit listed there
    exists."""
    layers = _documented_layers()
    listed = [unit for _, units in layers for unit in units]
    units = {_unit(name) for name in _package_modules("registry") if name != "registry"}
    assert sorted({u for u in listed if listed.count(u) > 1}) == [], "a unit is in two layers"
    assert sorted(units - set(listed)) == [], "place these units in architecture.md's Layers list"
    assert sorted(set(listed) - units) == [], "architecture.md's Layers list names units that do not exist"


def test_the_core_imports_only_downward_between_its_layers() -> None:
    """Each unit of registry/ imports units of its own layer or below (architecture.md, "Layers"), at module
    level and inside functions alike; an import under `if TYPE_CHECKING:` (annotations only) does not count."""
    layers = _documented_layers()
    layer = {unit: number for number, (_, units) in enumerate(layers) for unit in units}
    modules = _package_modules("registry")
    graph = {
        name: {m for m in _imports(name, tree) if m in modules and m != "registry"}
        for name, tree in modules.items()
        if name != "registry"
    }
    upward = [
        f"{name} (layer {layer[_unit(name)] + 1}, {layers[layer[_unit(name)]][0]}) imports {imported} "
        f"(layer {layer[_unit(imported)] + 1}, {layers[layer[_unit(imported)]][0]})"
        for name, imported in _upward_imports(graph, layer)
    ]
    assert upward == [], "upward imports between the core's layers:\n" + "\n".join(upward)
