"""Schema change proposals: a candidate (a schema for one topic, or a policy change) that a team reviews,
approves and applies exactly as approved (docs/architecture.md). `_model.py` the values, `_permissions.py`
who may do what, `_rules.py` what each step makes of a proposal, `_review.py` what a reviewer sees, `_desk.py`
the steps, `_records.py` their storage records, `_handle.py` the `Proposals` interface a handle offers as
`reg.proposals`, `_facade.py` its embedded implementation, `_words.py` the words the app and the CLI show its
state in. The public names are exported by `registry`.

A regular package (this file), not a namespace one: Spark executors import the project from a zip
(pipeline/_spark.py `code_archive`), and zipimport finds no package without its `__init__.py`.
"""
