"""X-25: loaded by schemathesis (SCHEMATHESIS_HOOKS) before its workers start.

The two workers name Hypothesis filters by parsing their source with ast.parse; two parses at once
can fail in CPython 3.11 ("SystemError: AST constructor recursion depth mismatch"), which the run
reports as a runtime error of whichever operation hit it, not as a finding about the API. Parses
are made one at a time here; nothing else changes.
"""
import ast
import threading

_lock = threading.Lock()
_parse = ast.parse


def _one_at_a_time(*args, **kwargs):
    with _lock:
        return _parse(*args, **kwargs)


ast.parse = _one_at_a_time
