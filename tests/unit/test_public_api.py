"""`registry.__all__` is the library's public surface, kept to what a user needs (issue 41): at most 90 names,
each importable from `registry`. The rest of the core's public names are imported from their own modules."""

from __future__ import annotations

import pytest

import registry

MAX_PUBLIC_NAMES = 90


def test_the_public_surface_stays_curated() -> None:
    assert len(registry.__all__) <= MAX_PUBLIC_NAMES, (
        f"registry.__all__ names {len(registry.__all__)} things: export from registry only what a user of the "
        "library needs, and import the rest from its own module"
    )


@pytest.mark.parametrize("name", registry.__all__)
def test_every_public_name_imports_from_registry(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from registry import {name}", namespace)  # noqa: S102 - the import statement a user writes
    assert namespace[name] is getattr(registry, name)


def test_a_star_import_brings_exactly_the_public_names_and_leaves_open_alone() -> None:
    namespace: dict[str, object] = {}
    exec("from registry import *", namespace)  # noqa: S102
    assert sorted(n for n in namespace if n != "__builtins__") == sorted(registry.__all__)
    assert registry.open.__module__ == "registry._open"  # `registry.open`, never the builtin hidden
