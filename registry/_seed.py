"""Load `sample_data/` (manifest.toml plus schema files) into a registry through the public facade.

Every step goes through the same register/delete/connect calls users make, so the sample registry is
something Pulsar itself would have accepted; a step Pulsar would refuse stops the seed with its reason.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.protobuf import descriptor_pb2

from ._errors import RegistryError, StorageError
from ._model import SchemaInfo
from ._schema_data import key_value_schema_info
from ._types import PRIMITIVE_TYPES, SchemaType
from .protobuf._native import to_protobuf_native_data

if TYPE_CHECKING:
    from ._registry import Registry

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"


class SeedError(RegistryError):
    """The sample data is missing, malformed, or holds a step the registry refuses."""


@dataclass(frozen=True, slots=True)
class SeedReport:
    tenants: int
    namespaces: int
    topics: int
    versions: int
    clients: int

    def __str__(self) -> str:
        return (
            f"seeded {self.tenants} tenants, {self.namespaces} namespaces, {self.topics} topics, "
            f"{self.versions} schema versions and {self.clients} clients"
        )


def seed_sample_data(registry: Registry, sample_dir: str | Path | None = None) -> SeedReport:
    """Apply `sample_dir/manifest.toml` (default: the project's sample_data/) to `registry`."""
    root = Path(sample_dir) if sample_dir is not None else SAMPLE_DIR
    manifest_path = root / "manifest.toml"
    try:
        manifest = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SeedError(f"no sample data manifest at {manifest_path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SeedError(f"{manifest_path} is not valid TOML: {exc}") from None
    loader = _Loader(registry, root / "schemas")
    for tenant in manifest.get("tenants", []):
        registry.create_tenant(_required(tenant, "name", "tenant"))
    for ns in manifest.get("namespaces", []):
        loader.namespace(ns)
    versions = clients = 0
    for topic in manifest.get("topics", []):
        added, connected = loader.topic(topic)
        versions += added
        clients += connected
    return SeedReport(
        tenants=len(manifest.get("tenants", [])),
        namespaces=len(manifest.get("namespaces", [])),
        topics=len(manifest.get("topics", [])),
        versions=versions,
        clients=clients,
    )


def _required(table: dict[str, Any], key: str, what: str) -> Any:
    if key not in table:
        raise SeedError(f"a {what} entry in the manifest has no {key!r}: {table}")
    return table[key]


def _millis(at: str) -> int:
    try:
        return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        raise SeedError(f"invalid timestamp {at!r} in the manifest: use ISO 8601, e.g. 2025-01-31T09:00:00Z") from None


class _Loader:
    def __init__(self, registry: Registry, schemas: Path) -> None:
        self.registry = registry
        self.schemas = schemas

    @contextmanager
    def at(self, millis: int | None) -> Iterator[None]:
        """Register with the manifest's timestamp instead of the wall clock."""
        if millis is None:
            yield
            return
        saved = self.registry._clock
        self.registry._clock = lambda: millis
        try:
            yield
        finally:
            self.registry._clock = saved

    def read(self, relative: str) -> bytes:
        path = (self.schemas / relative).resolve()
        if self.schemas.resolve() not in path.parents:
            raise SeedError(f"schema path {relative!r} leaves the sample data folder")
        try:
            return path.read_bytes()
        except OSError as exc:
            raise SeedError(f"cannot read schema file {relative!r}: {exc}") from None

    def namespace(self, ns: dict[str, Any]) -> None:
        name = _required(ns, "name", "namespace")
        self.registry.create_namespace(name)
        fields = ("compatibility", "auto_update_strategy", "allow_auto_update", "validation_enforced")
        changes = {k: ns[k] for k in fields if k in ns}
        if changes:
            self.registry.set_namespace_policy(name, **changes)

    def topic(self, topic: dict[str, Any]) -> tuple[int, int]:
        name = _required(topic, "name", "topic")
        self.registry.create_topic(name)
        if "compatibility" in topic:
            self.registry.set_topic_policy(name, compatibility=topic["compatibility"])
        added = 0
        infos: dict[int, SchemaInfo] = {}
        for step in topic.get("steps", []):
            with self.at(_millis(step["at"]) if "at" in step else None):
                user = step.get("user", "")
                try:
                    if step.get("delete"):
                        self.registry.delete(name, user=user)
                        infos.clear()
                        continue
                    info = self.schema_info(step)
                    version = self.registry.register(name, info, user=user).version
                except RegistryError as exc:
                    if isinstance(exc, SeedError | StorageError):
                        raise
                    raise SeedError(f"sample topic {name}: step {step} was refused: {exc}") from None
            infos[version] = info
            added += 1
        connected = 0
        for client in topic.get("clients", []):
            connected += self.client(name, client, infos)
        return added, connected

    def schema_info(self, step: dict[str, Any]) -> SchemaInfo:
        kind = SchemaType.parse(_required(step, "type", "step"))
        props = {str(k): str(v) for k, v in step.get("properties", {}).items()}
        if kind is SchemaType.PROTOBUF_NATIVE:
            file_set = descriptor_pb2.FileDescriptorSet()
            file_set.ParseFromString(self.read(_required(step, "register", "protobuf step")))
            text = to_protobuf_native_data(
                file_set,
                _required(step, "root_message", "protobuf step"),
                _required(step, "root_file", "protobuf step"),
            )
            return SchemaInfo(type=kind, schema=text, properties=props)
        if kind is SchemaType.KEY_VALUE:
            key = self.part(step, "key")
            value = self.part(step, "value")
            info = key_value_schema_info(key, value, encoding=step.get("encoding", "INLINE"))
            return SchemaInfo(type=kind, schema=info.schema, properties={**info.properties, **props})
        if kind in PRIMITIVE_TYPES:
            return SchemaInfo(type=kind, schema="", properties=props)
        text = self.read(_required(step, "register", "step")).decode("utf-8")
        return SchemaInfo(type=kind, schema=json.dumps(json.loads(text), separators=(",", ":")), properties=props)

    def part(self, step: dict[str, Any], which: str) -> SchemaInfo:
        kind = SchemaType.parse(_required(step, f"{which}_type", "KEY_VALUE step"))
        if kind in PRIMITIVE_TYPES:
            return SchemaInfo(type=kind, schema="")
        text = self.read(_required(step, which, "KEY_VALUE step")).decode("utf-8")
        return SchemaInfo(type=kind, schema=text)

    def client(self, topic: str, client: dict[str, Any], infos: dict[int, SchemaInfo]) -> int:
        role = _required(client, "role", "client")
        version = client.get("version")
        info = infos.get(version) if version is not None else None
        if version is not None and info is None:
            raise SeedError(f"sample topic {topic}: client {client} names version {version}, which is not live")
        name = _required(client, "name", "client")
        if role == "producer":
            admission = self.registry.connect_producer(topic, info, name=name)
        elif role == "consumer":
            admission = self.registry.connect_consumer(
                topic, info, subscription=client.get("subscription", name), name=name
            )
        else:
            raise SeedError(f"sample topic {topic}: client role must be producer or consumer, not {role!r}")
        if not admission.accepted:
            raise SeedError(f"sample topic {topic}: {role} {name!r} was refused: {admission.reason}")
        return 1
