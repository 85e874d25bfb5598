"""PROTOBUF_NATIVE schemas: the descriptor-set document Pulsar stores, the semantic diff and buf-style
advisories, and compiling .proto sources with protoc.

The modules are private to the core: shells use the names `registry` exports."""
