"""Storage: the SQLite file (apsw), its schema and SQL, and the vec0 tables."""
