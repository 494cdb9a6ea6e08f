"""The ranking stages after fusion: each a pure function and its `Stage`."""
