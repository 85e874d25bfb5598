"""Where a registry keeps its records: the storage protocols, memory and SQLite, the read cache, the remote
backend over a Pulsar admin API, and snapshots (JSON lines) for backup and Spark.

A shell imports what `registry` exports, and the modules' other public names from the modules themselves."""
