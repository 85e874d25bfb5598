"""Pulsar Schema Explorer: the Streamlit shell. `schema-explorer ui` runs `streamlit run` on this file.

Declares the pages (st.Page / st.navigation; files in app/app_pages/) and the sidebar shared by all of them:
the connection, read-only mode and the policy defaults in force. Pages get the registry from app.state, and
keep their state in the URL (app/links.py); a link's `registry=` is followed before anything else runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

# `streamlit run app/streamlit_app.py` puts app/ on sys.path, not the checkout: add it so `import app` works.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from app import answers  # noqa: E402
from app.links import follow_connection  # noqa: E402
from app.widgets import connection_sidebar  # noqa: E402

_PAGES_DIR = Path(__file__).resolve().parent / "app_pages"


def _page(file: str, title: str, icon: str, *, default: bool = False, hidden: bool = False) -> st.Page | None:
    """A page of app_pages/, or None while its file does not exist yet; `hidden` pages are not in the menu
    (one proposal: reached by a link, `/proposal?id=N`)."""
    if not (_PAGES_DIR / file).is_file():
        return None
    # The default page is served at `/` but still reserves its path name, which Streamlit then does not serve:
    # it gets "index", so that `/browse` can be the alias that links use.
    path = "index" if default else file.removesuffix(".py")
    return st.Page(
        f"app_pages/{file}",
        title=title,
        icon=icon,
        url_path=path,
        default=default,
        visibility="hidden" if hidden else "visible",
    )


# The one list of pages, in menu order. To add a page: create app/app_pages/<name>.py and append
# `_page("<name>.py", "Title", ":material/icon:")` here. Entries whose file is missing are left out, so the
# review pages appear as soon as they exist. A page that works on one topic can end with `topic_page(render)`
# (app/topic_page.py; render(reg, topic) -> its link parameters besides `topic`, or None; app/links.py).
PAGES: list[st.Page | None] = [
    _page("browse.py", "Browse", ":material/travel_explore:", default=True),
    _page("topic.py", "Topic", ":material/schema:"),
    _page("diff.py", "Diff", ":material/difference:"),
    _page("whatif.py", "What-if", ":material/science:"),
    _page("policies.py", "Policies", ":material/policy:"),
    _page("proposals.py", "Proposals", ":material/rate_review:"),
    _page("audit.py", "Audit", ":material/history:"),
    _page("compare.py", "Compare", ":material/compare_arrows:"),
    _page("proposal.py", "Proposal", ":material/rate_review:", hidden=True),
]


def _browse_link() -> None:
    """`/browse?...` (the form links use) opens Browse, which Streamlit serves at `/` as the default page."""
    st.switch_page(PAGES[0], query_params=st.query_params.to_dict())  # type: ignore[arg-type]


st.set_page_config(page_title="Pulsar Schema Explorer", page_icon=":material/schema:", layout="wide")
alias = st.Page(_browse_link, title="Browse", url_path="browse", visibility="hidden")
navigation = st.navigation([*(page for page in PAGES if page is not None), alias])
follow_connection()
connection_sidebar()
answers.on_page(navigation.url_path)  # a write's answer stays on its page, until the person leaves it
navigation.run()
