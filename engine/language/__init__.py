"""Languages: which one a chunk is written in (detect), and the words the keyword index holds
for it (analyze): Snowball stems, and Han, Kana and Hangul as characters and pairs
(docs/languages.md)."""
