"""X-25: loaded by schemathesis (SCHEMATHESIS_HOOKS) before its workers start.

1. The two workers name Hypothesis filters by parsing their source with ast.parse; two parses at
   once can fail in CPython 3.11 ("SystemError: AST constructor recursion depth mismatch"), which
   the run reports as a runtime error of whichever operation hit it, not as a finding about the API.
   Parses are made one at a time here.
2. In the stateful walks only (X25_FRESH_REQUEST_KEYS=1), each create carries a request_key of its
   own, as a buyer's new order does. Hypothesis repeats its small values ("0", "k1"), so the walks'
   creates were replays of one order (200 REPLAY) or another body under a used key (422): in one run
   6 orders in 128 walks, the first walk cancelled the order and every later pay of it was 409. The
   key stays within the document's pattern; the main run fuzzes the key as generated.
"""
import ast
import os
import threading
import uuid

_lock = threading.Lock()
_parse = ast.parse


def _one_at_a_time(*args, **kwargs):
    with _lock:
        return _parse(*args, **kwargs)


ast.parse = _one_at_a_time

if os.environ.get("X25_FRESH_REQUEST_KEYS") == "1":
    import schemathesis

    @schemathesis.hook
    def before_call(context, case, kwargs):
        operation = case.operation
        if operation.method.upper() == "POST" and operation.path == "/orders" and isinstance(case.body, dict) \
                and isinstance(case.body.get("request_key"), str):
            case.body["request_key"] = "walk-" + uuid.uuid4().hex
