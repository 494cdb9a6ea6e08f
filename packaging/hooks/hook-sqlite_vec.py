"""PyInstaller hook: sqlite-vec's loadable extension.

`collect_dynamic_libs("sqlite_vec")` finds nothing on Linux because the library is called
`vec0.so`, not `lib*.so`; search for `vec0.*` (vec0.so, vec0.dylib, vec0.dll). The library lands
in the bundle's `sqlite_vec/` folder, where `sqlite_vec.loadable_path()` looks for it.
"""

from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("sqlite_vec", search_patterns=["vec0.*"])
