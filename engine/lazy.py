"""Names a package imports on first use (PEP 562), so that importing the package stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, namespace: dict[str, Any], modules: Mapping[str, str]
) -> Callable[[str], Any]:
    """The package's module `__getattr__`: a name in `modules` is imported from the module it
    maps to and kept in `namespace` (the package's globals), so later lookups find it
    there; any other name is an AttributeError naming `package`."""

    def lazy_name(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(modules[name]), name)
        namespace[name] = value
        return value

    return lazy_name
