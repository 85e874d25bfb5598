"""Schema policies: which value is in force and where it comes from, and how changes are read and checked
(the preview of a change before it is saved is an explanation: explain/_preview.py).

A shell imports what `registry` exports, and the modules' other public names from the modules themselves."""
