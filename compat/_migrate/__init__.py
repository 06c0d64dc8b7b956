"""The machinery behind ``python -m compat.migrate`` (private; see ``compat/migrate.py``)."""
