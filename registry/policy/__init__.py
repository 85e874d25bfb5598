"""Schema policies: which value is in force and where it comes from, and how changes are read and checked
(the preview of a change before it is saved is an explanation: explain/_preview.py).

The modules are private to the core: shells use the names `registry` exports."""
