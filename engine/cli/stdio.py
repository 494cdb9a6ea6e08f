"""Standard output as a shell pipe sees it: a reader that goes away early, and Ctrl+C.

`memex discover | head -1`: `head` exits after one line, and the next write to the pipe fails
with `BrokenPipeError` (Python ignores SIGPIPE, so this is the same on every platform; no
signal handler is set, and Windows has no SIGPIPE). That is the reader's choice, not an
error: the rest of the output is dropped without a word and the exit code is 141, what a
shell reports for a program that SIGPIPE ended (128 + 13), so a script running with
`set -o pipefail` still learns that the output was cut short.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from engine.cli.common import EXIT_INTERRUPTED

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports `yes | head -1`


def guarded(run: Callable[[], int]) -> int:
    """`run()`'s exit code; a closed stdout pipe or Ctrl+C end it quietly, never a traceback."""
    try:
        code = run()
        sys.stdout.flush()  # buffered output meets a closed pipe here, not at exit
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        sys.stderr.write("memex: interrupted\n")
        return EXIT_INTERRUPTED
    return code


def _drop_stdout() -> None:
    """Python flushes stdout once more at exit: with devnull behind its descriptor, the
    unwritten rest goes nowhere instead of raising again (the Python docs' recipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a descriptor
        pass
