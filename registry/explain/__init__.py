"""Verdicts on what has not happened yet and the changes between schemas: what-if answers, upgrade plans,
policy impact, semantic diffs and their text form.

The modules are private to the core: shells use the names `registry` exports."""
