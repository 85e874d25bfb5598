"""The `schema-explorer` command line: a thin shell over `registry` (see cli.main)."""
