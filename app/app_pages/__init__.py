"""The app's pages, one file each, declared in app/streamlit_app.py's `PAGES` (st.Page / st.navigation)."""
