"""The Spark shell: fleet-wide and data-level audits that call the registry core per partition.

`schema-explorer audit compat-matrix | policy-impact | data` (cli/audit.py) reads the source once on the
driver, ships topics (or archived messages) as rows, and writes Parquet tables that the app's Audit page and
the notebooks read. Tables and columns are documented in pipeline/README.md and in each job's module.
"""
