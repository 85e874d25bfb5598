"""PROTOBUF_NATIVE schemas: the descriptor-set document Pulsar stores, the semantic diff and buf-style
advisories, and compiling .proto sources with protoc.

A shell imports what `registry` exports, and the modules' other public names from the modules themselves."""
