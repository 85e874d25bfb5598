"""Compile the Avro core with mypyc, next to its sources: an optional speed-up, never a requirement.

    python tools/build_speedups.py            build when the sources changed since the last build
    python tools/build_speedups.py --force    build even if up to date
    python tools/build_speedups.py --clean    remove the compiled modules (pure Python from then on)
    python tools/build_speedups.py --status   say which build `import registry` loads

The pure-Python modules stay the source of truth; this compiles copies of them (in build/speedups/) and
puts the extension modules next to them in registry/avro/ (`registry/avro/*.so`, gitignored; mypyc's shared library
for the four, `*__mypyc.*.so`, goes to the checkout's root), where the import system prefers them.
`make install` (run by `make run` and `make test`) calls it. It never fails the caller: without mypy, a C
compiler or Python's headers, or when compiling or the smoke test after it fails, it prints one warning,
leaves no compiled module behind and exits 0, and the project runs in pure Python.

A compiled build knows the SHA-256 of the sources it was compiled from; `registry/avro/_nodes.py` refuses
to load a compiled build whose sources have changed since (an ImportError that says to rerun this), so an
edited source is never shadowed by old machine code. Set PSE_NO_SPEEDUPS=1 to skip the build (and remove
any compiled modules).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "registry"
SOURCES = PACKAGE / "avro"  # the compiled modules' folder
WORK = ROOT / "build" / "speedups"
# Compiled together (one shared library: calls between them stay native). Order matters for the hash.
MODULES = ("_nodes.py", "_parser.py", "_schema.py", "_resolution.py")
# mypyc's shared library for the group (`<hash>__mypyc.*.so`) goes to the checkout's root, which is on sys.path.
# (A dotted group name would put it in the package, but then mypyc gives the modules a wrong __file__.)
HASH_LINE = '_BUILT_FROM = ""'
TIMEOUT_S = 240
EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def source_digest() -> str:
    """What a compiled build records and `registry.avro._nodes._check_build` recomputes at import."""
    digest = hashlib.sha256()
    for name in MODULES:
        digest.update(name.encode() + b"\0" + (SOURCES / name).read_bytes())
    return f"{','.join(MODULES)}:{digest.hexdigest()}"


def compiled_files() -> list[Path]:
    """Every compiled module of ours in the package (any ABI tag: also ones another Python left behind)."""
    stems = [Path(name).stem for name in MODULES]
    return sorted([p for stem in stems for p in SOURCES.glob(f"{stem}.*.so")] + list(ROOT.glob("*__mypyc.*.so")))


def clean() -> list[Path]:
    removed = compiled_files()
    for path in removed:
        path.unlink(missing_ok=True)
    (WORK / "stamp").unlink(missing_ok=True)
    return removed


def warn(message: str) -> int:
    removed = clean()
    note = " (removed the old compiled modules)" if removed else ""
    print(f"warning: speedups not built, the Avro core runs in pure Python{note}: {message}", file=sys.stderr)
    return 0


def missing_prerequisite() -> str | None:
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypy (with mypyc) is not installed in this environment"
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None and shutil.which("cc") is None:
        return f"no C compiler ({compiler!r} not found); on Debian/Ubuntu: apt-get install -y gcc"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h); on Debian/Ubuntu: apt-get install -y python3-dev"
    return None


_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
setup(
    name="registry-speedups",
    ext_modules=mypycify({paths!r}, opt_level="3"),
    script_args=["build_ext", "--inplace"],
)
"""

_SMOKE = """
import registry.avro._schema as s, registry.avro._resolution as r
assert s.__file__.endswith({ext!r}) and r.__file__.endswith({ext!r}), (s.__file__, r.__file__)
import os  # the stale-build check finds the sources next to the module
assert os.path.exists(os.path.join(os.path.dirname(s.__file__), "_schema.py")), s.__file__
reader = s.parse_avro('{{"type":"record","name":"R","fields":[{{"name":"a","type":"long"}}]}}')
writer = s.parse_avro('{{"type":"record","name":"R","fields":[{{"name":"a","type":"int"}}]}}')
assert r.resolve(reader, writer) == [] and len(r.resolve(writer, reader)) == 1
"""


def build() -> int:
    problem = missing_prerequisite()
    if problem is not None:
        return warn(problem)
    digest = source_digest()
    src = WORK / "src"
    shutil.rmtree(src, ignore_errors=True)
    # mypyc type-checks the modules it compiles, so it needs the whole package (only MODULES are compiled).
    shutil.copytree(PACKAGE, src / "registry", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    schema = src / "registry" / "avro" / MODULES[0]
    text = schema.read_text(encoding="utf-8")
    if text.count(HASH_LINE) != 1:
        return warn(f"registry/avro/{MODULES[0]} must contain the line {HASH_LINE!r} exactly once")
    schema.write_text(text.replace(HASH_LINE, f"_BUILT_FROM = {digest!r}"), encoding="utf-8")
    log = WORK / "build.log"
    paths = [f"registry/avro/{name}" for name in MODULES]
    try:
        with log.open("w") as out:
            done = subprocess.run(
                [sys.executable, "-c", _SETUP.format(paths=paths)],
                cwd=src,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=TIMEOUT_S,
                env={**os.environ, "MYPY_CACHE_DIR": str(WORK / "mypy_cache")},
            )
    except subprocess.TimeoutExpired:
        return warn(f"mypyc took longer than {TIMEOUT_S} s (log: {log.relative_to(ROOT)})")
    if done.returncode != 0:
        return warn(f"mypyc failed (log: {log.relative_to(ROOT)})")
    built = sorted((src / "registry" / "avro").glob(f"*{EXT}")) + sorted(src.glob(f"*__mypyc{EXT}"))
    if len(built) != len(MODULES) + 1:
        return warn(f"mypyc produced {[p.name for p in built]} (log: {log.relative_to(ROOT)})")
    clean()
    for path in built:
        # A new file renamed over the old: processes that have the old one loaded keep a valid mapping.
        target = (SOURCES if path.parent.name == "avro" else ROOT) / path.name
        tmp = target.with_name(f".{path.name}.tmp")
        shutil.copy2(path, tmp)
        os.replace(tmp, target)
    smoke = subprocess.run(
        [sys.executable, "-c", _SMOKE.format(ext=EXT)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    if smoke.returncode != 0:
        tail = (smoke.stderr.strip().splitlines() or ["?"])[-1]
        return warn(f"the compiled modules failed their smoke test: {tail}")
    (WORK / "stamp").write_text(digest + "\n" + "\n".join(p.name for p in built) + "\n")
    print(f"==> speedups: compiled {', '.join(MODULES)} with mypyc (registry/avro/*{EXT})")
    return 0


def up_to_date() -> bool:
    stamp = WORK / "stamp"
    if not stamp.exists():
        return False
    digest, *names = stamp.read_text().split()
    installed = {p.name for p in compiled_files()}
    return digest == source_digest() and bool(names) and all(name in installed for name in names)


def status() -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import registry.avro._schema as s; print(s.__file__)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return "import failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return "compiled (mypyc)" if done.stdout.strip().endswith(".so") else "pure Python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--force", action="store_true", help="build even when up to date")
    group.add_argument("--clean", action="store_true", help="remove the compiled modules")
    group.add_argument("--status", action="store_true", help="say which build is loaded")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if args.status:
        print(status())
        return 0
    if args.clean:
        removed = clean()
        print(f"==> speedups: removed {len(removed)} compiled module(s); the Avro core runs in pure Python")
        return 0
    if os.environ.get("PSE_NO_SPEEDUPS"):
        removed = clean()
        print(f"==> speedups: skipped (PSE_NO_SPEEDUPS is set){'; removed the compiled modules' if removed else ''}")
        return 0
    if not args.force and up_to_date():
        return 0
    try:
        return build()
    except Exception as exc:  # an optional step: any failure means pure Python, never a failed make
        return warn(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    sys.exit(main())
