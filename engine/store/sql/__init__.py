"""SQL builders, one module per table: each function returns a statement; callers execute it.

Builders take only structural arguments (a table name, a count of placeholders, a filter
fragment built elsewhere with its own parameters); values always stay bound parameters.
Table names that come from the index itself (vec0 tables named in `meta`) pass through
`identifier` before they reach a statement. tests/snapshots/sql.txt holds every statement.
"""

from engine.store.sql.base import IdentifierError, identifier, placeholders

__all__ = ["IdentifierError", "identifier", "placeholders"]
