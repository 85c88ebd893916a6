"""The files in which the pod workers leave their large results for the writer (pipeline._in_workers).

A file holds one group's result: its pickle, with each large `bytes` object in it (a pod's -o json node
map: ~1.8 MB at 5,000 nodes) left out of the pickle and stored raw after it. Read back, a result's large
texts are `FileText`s, spans of the file, which `write_texts` hands to the output with os.sendfile: the
kernel copies them from the file's pages (memory, in /dev/shm) to stdout. The text of 1,000 pods (2.8 GB) is
then neither pickled nor read nor unpickled nor copied through Python buffers: four copies fewer per pod,
and the pages they would fault in (benchmarks/README.md, sixteenth round).

Layout: 8 bytes (the pickle's length, little-endian), the pickle, the texts one after another. A text's
place in the pickle is a persistent id (its offset after the pickle, its length).
"""

from __future__ import annotations

import io
import os
import pickle
import select
from collections.abc import Iterable
from typing import Any, BinaryIO

__all__ = ["FileText", "read", "write", "write_texts"]

# A bytes object at least this long is stored raw after the pickle (smaller ones are not worth a span).
OUT_OF_BAND = 1 << 16
_HEAD = 8
_CHUNK = 1 << 20


class _Open:
    """A spool file's descriptor, closed when the last FileText of the file is gone (its name was
    removed when it was read: the descriptor holds the text's pages)."""

    __slots__ = ("fd", "name")

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name

    def __del__(self) -> None:
        os.close(self.fd)


class FileText:
    """`length` bytes of an open spool file from `offset`: a large text of a worker's result, read by
    `write_texts` only."""

    __slots__ = ("file", "length", "offset")

    def __init__(self, file: _Open, offset: int, length: int) -> None:
        self.file = file
        self.offset = offset
        self.length = length

    def __len__(self) -> int:
        return self.length

    def write_to(self, out: BinaryIO) -> None:
        """The text written to `out` after what `out` holds: by sendfile when `out` is a file descriptor's
        buffered writer, else (or where the kernel refuses: a file opened for appending) read and written
        in chunks."""
        start, end = self.offset, self.offset + self.length
        fd = self.file.fd
        try:
            target = out.fileno() if isinstance(out, io.BufferedWriter | io.FileIO) else None
        except (OSError, ValueError):
            target = None
        if target is not None:
            out.flush()
            try:
                while start < end:
                    try:
                        sent = os.sendfile(target, fd, start, end - start)
                    except BlockingIOError:  # a non-blocking stdout (some CI runners leave it so): wait
                        select.select([], [target], [])
                        continue
                    if sent == 0:
                        raise OSError(f"spool file {self.file.name!r} ends before its text")
                    start += sent
            except OSError as e:
                if not _refused(e):
                    raise
        while start < end:  # what sendfile did not send
            chunk = os.pread(fd, min(_CHUNK, end - start), start)
            if not chunk:
                raise OSError(f"spool file {self.file.name!r} ends before its text")
            out.write(chunk)
            start += len(chunk)


def _refused(e: OSError) -> bool:
    """sendfile not possible for this pair of files: what it has not sent is read and written instead."""
    import errno

    return e.errno in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF, errno.EXDEV)


def write_texts(out: BinaryIO, parts: Iterable[bytes | FileText]) -> None:
    """Write a result's parts in order: bytes as they are, FileTexts from their spool file."""
    for part in parts:
        if isinstance(part, FileText):
            part.write_to(out)
        else:
            out.write(part)


class _Pickler(pickle.Pickler):
    """Large bytes objects stored apart. The pickler calls persistent_id for every object it writes: a
    result without texts to keep apart (the human report's sections) is pickled the ordinary way."""

    def __init__(self, file: BinaryIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.texts: list[bytes] = []
        self.size = 0

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is bytes and len(obj) >= OUT_OF_BAND:
            self.texts.append(obj)
            at = self.size
            self.size += len(obj)
            return (at, len(obj))
        return None


def write(path: str, result: Any, smaller_than: int, *, texts_apart: bool) -> bool:
    """Store `result` in a new file at `path`, its large bytes objects raw after the pickle when
    `texts_apart` (read back as FileTexts: for a reader that writes them with write_texts), else all of
    it in the pickle. False (no file made) when it takes fewer than `smaller_than` bytes in all: the
    caller sends it the ordinary way. OSError when the file cannot be written (the caller removes what
    was made)."""
    buf = io.BytesIO()
    buf.write(bytes(_HEAD))
    texts: list[bytes] = []
    if texts_apart:
        apart = _Pickler(buf)
        apart.dump(result)
        texts = apart.texts
    else:
        pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(result)
    head = buf.getbuffer()
    if len(head) + sum(map(len, texts)) < smaller_than:
        return False
    head[:_HEAD] = (len(head) - _HEAD).to_bytes(_HEAD, "little")
    chunks: list[memoryview | bytes] = [head, *texts]
    with open(path, "xb", buffering=0) as f:
        for data in chunks:
            view = memoryview(data)
            while view:
                n = f.write(view)
                if not n:
                    raise OSError(f"could not write {path!r}")
                view = view[n:]
    return True


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, file: _Open, base: int, size: int) -> None:
        super().__init__(io.BytesIO(data))
        self.file = file
        self.base = base
        self.size = size

    def persistent_load(self, pid: Any) -> FileText:
        at, length = pid
        if not (isinstance(at, int) and isinstance(length, int)) or self.base + at + length > self.size:
            raise pickle.UnpicklingError("a text beyond the end of the spool file")
        return FileText(self.file, self.base + at, length)


def read(path: str) -> Any:
    """The result stored at `path`, the texts stored apart as FileTexts of the file (kept open by them),
    and the file removed. Raises OSError, EOFError or pickle.UnpicklingError when it cannot be read back whole."""
    try:
        file = _Open(os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)), path)
    finally:
        os.unlink(path)
    size = os.fstat(file.fd).st_size
    n = int.from_bytes(os.pread(file.fd, _HEAD, 0), "little")
    data = os.pread(file.fd, n, _HEAD) if 0 < n <= size - _HEAD else b""
    if not data or len(data) != n:
        raise EOFError(f"spool file {path!r} cut short")
    return _Unpickler(data, file, _HEAD + n, size).load()
