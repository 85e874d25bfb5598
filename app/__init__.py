"""Streamlit shell: streamlit_app.py and (later) app_pages/."""
