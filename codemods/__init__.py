"""libcst codemods that migrate user code from the old Lightning API (names from compat.renames)."""
