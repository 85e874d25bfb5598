"""Schema policies: which value is in force and where it comes from, how changes are read and checked, and
the preview of a change before it is saved.

The modules are private to the core: shells use the names `registry` exports."""
