"""Verdicts on what has not happened yet and the changes between schemas: what-if answers, upgrade plans,
policy impact, semantic diffs and their text form.

A shell imports what `registry` exports, and the modules' other public names from the modules themselves."""
