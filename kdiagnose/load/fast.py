"""Entry point of the streaming loaders for big single files (files.py falls back to whole-file decoding).

Small files keep the ordinary path: it is as fast for them, and its behaviour (error messages, line numbers)
is what the tests pin down. Above FAST_MIN_BYTES a kubectl-style List is streamed item by item
(stream_json, stream_yaml), with bound Pods and Nodes trimmed to what the scheduler reads as they arrive.
"""

from __future__ import annotations

import io
from pathlib import Path

from kdiagnose.load.raw import LoadResult

__all__ = ["FAST_MIN_BYTES", "load_large_bytes", "load_large_file"]

FAST_MIN_BYTES = 16 << 20


def load_large_file(path: Path, source: str, result: LoadResult) -> bool:
    """Stream `path` into `result` if it is a big kubectl-layout List; False to take the ordinary path."""
    try:
        size = path.stat().st_size
    except OSError:
        return False
    if size < FAST_MIN_BYTES:
        return False
    name = path.name.lower()
    if name.endswith(".json"):
        from kdiagnose.load.parallel import load_json_list_parallel

        done = load_json_list_parallel(path, source, result)
        if done is not None:
            return done
        from kdiagnose.load.stream_json import load_json_list

        return load_json_list(path, source, result)
    if name.endswith((".yaml", ".yml")):
        from kdiagnose.load.stream_yaml import load_yaml_list

        return load_yaml_list(path, source, result)
    return False


def load_large_bytes(data: bytes, source: str, result: LoadResult) -> bool:
    """The same for bytes already read (stdin, archive members): big Lists and top-level sequences are
    decoded in batches, so their items are checked as they come."""
    if len(data) < FAST_MIN_BYTES:
        return False
    head = data[:4096].lstrip()
    if head.startswith(b"{"):
        from kdiagnose.load.stream_json import load_json_list

        return load_json_list(io.BytesIO(data), source, result)
    from kdiagnose.load.stream_yaml import load_yaml_list

    return load_yaml_list(io.BytesIO(data), source, result)
