"""The warm `memex --search`: a running app or `memex watch` answers it over a local socket.

Light on purpose: importing this package (and `engine.settings`, which it uses) loads no
numpy, onnxruntime, apsw or model, so the client reaches the socket in a few milliseconds and
falls back to the one-shot path only when no warm process serves this index. The request
handler, which needs the engine, is `engine.cli.warm`. Design: docs/architecture.md.
"""
