"""Avro as Pulsar parses and resolves it: the schema parser, reader/writer resolution (both compiled with mypyc
when tools/build_speedups.py can), the semantic diff, and the legacy Jackson JSON-Schema form.

The modules are private to the core: shells use the names `registry` exports."""
