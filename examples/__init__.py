"""Scripts that use alem but are not part of the installed wheel (run from a clone: ``python -m examples.<name>``)."""
