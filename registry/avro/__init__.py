"""Avro as Pulsar parses and resolves it: the schema parser, reader/writer resolution (both compiled with mypyc
when tools/build_speedups.py can), the semantic diff, and the legacy Jackson JSON-Schema form.

A shell imports what `registry` exports, and the modules' other public names from the modules themselves."""
