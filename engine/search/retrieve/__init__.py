"""The retrievers: keyword (FTS5, warm postings) and vector (vec0, warm matrix), the index mirror they follow, the query's vector, and the retrieve and fuse stages."""
