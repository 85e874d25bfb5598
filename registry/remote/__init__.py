"""The remote side: a registry handle over a Pulsar admin v2 API (a broker, or `schema-explorer serve`).

`_handle.py` RemoteRegistry; `_backend.py` the admin API read as a storage backend; `_admin_client.py` the
HTTP client of the admin API; `_explorer_api.py` the explorer API of `serve`, and `_answers.py` what the handle
asks it; `_broker_index.py` a plain broker's background search index and its local cache. A shell
imports the public names it needs from these modules; httpx is imported only when a URL is opened.
"""
