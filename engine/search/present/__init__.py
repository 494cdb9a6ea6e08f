"""What a search returns: results dressed with snippets and highlights, facets, neighbours, the response and its errors."""
