"""Presentation of the core's values: HTML for Jupyter, pandas tables, altair charts and notebook helpers.

The views use the core's public names only and the core never imports them, so `import registry` stays free of
pandas, altair and IPython. Importing `registry.views` inside IPython (or `%load_ext registry.views`) registers
an HTML view for each of the core's values with IPython's display formatter: a `CompatibilityResult`, a
`WhatIf` or a `SchemaDiff` left at the end of a cell shows as a table. `registry.views.notebook` (imported as
`nb` in notebooks/explore.ipynb) imports this package, so a notebook that uses it gets the views too.
"""

from __future__ import annotations

import sys
from typing import Any

from .html import RENDERERS, to_html

__all__ = ["load_ipython_extension", "register_html_views", "to_html"]


def register_html_views(shell: Any = None) -> bool:
    """Register the HTML views with `shell` (an IPython InteractiveShell), or with the running one when there is
    one; False when there is none. IPython is never imported here: outside it, this does nothing."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is None:
            return False
    formatter = shell.display_formatter.formatters["text/html"]
    for kind, render in RENDERERS.items():
        formatter.for_type(kind, render)
    return True


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext registry.views`."""
    register_html_views(shell)


register_html_views()
