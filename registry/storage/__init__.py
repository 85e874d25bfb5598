"""Where a registry keeps its records: the storage protocols, memory and SQLite, the read cache, the remote
backend over a Pulsar admin API, and snapshots (JSON lines) for backup and Spark.

The modules are private to the core: shells use the names `registry` exports."""
