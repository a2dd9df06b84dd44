"""A worker process that draws Vega-Lite specifications as SVG with vl-convert (see :mod:`.chart_pool`).

Run as a script (``python -P chart_worker.py``), it imports nothing of the package: only the
standard library and vl-convert, so that it starts in a fraction of a second. It reads one
request per line on stdin, ``{"id": n, "spec": {...}}``, draws the specification and writes one
line per request on stdout, ``{"id": n, "svg": "..."}`` or ``{"id": n, "error": "..."}``. It
writes no file and ends when stdin is closed (its parent ended, however it ended).
"""

from __future__ import annotations

import contextlib
import json
import sys


def serve(lines, reply) -> None:
    """Answer every request of ``lines`` (JSON text) with ``reply(line)``.

    Without vl-convert (the ``charts`` extra not installed) every request is answered with an
    error: the parent then meets the same missing extra and says so.
    """
    try:
        import vl_convert
    except ImportError as missing:
        vl_convert, why = None, f"{type(missing).__name__}: vl-convert-python is not installed (the charts extra)"

    for line in lines:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            if vl_convert is None:
                answer = {"id": request["id"], "error": why}
            else:
                answer = {"id": request["id"], "svg": vl_convert.vegalite_to_svg(request["spec"])}
        except Exception as error:  # noqa: BLE001 - told to the parent, which draws the chart itself
            answer = {"id": request["id"], "error": f"{type(error).__name__}: {error}"}
        reply(json.dumps(answer, ensure_ascii=True) + "\n")


def main() -> None:
    def reply(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):  # the run was interrupted: nothing to keep
        serve(sys.stdin, reply)


if __name__ == "__main__":
    main()
