"""An HTTP answer's body, decoded (Content-Encoding) by mcptask itself, with every layer's
output counted as it is produced.

httpx decodes a whole raw chunk at once: 236 bytes of `Content-Encoding: gzip, gzip, gzip`
become 1 GiB in memory before any cap between decoded chunks can look at it, and a body that
is not what its encoding says ends as `httpx.DecodingError`. Here each layer gives at most
`PIECE` bytes at a time, each layer's output is counted against the cap (so neither the answer
nor any layer under it can grow past it), and a bad encoding is a `ProtocolError` of the server.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable, Iterator

import httpx

from mcptask.errors import ProtocolError
from mcptask.text import urls

#: the most one decoding step gives at once (memory per layer stays about this)
PIECE = 64 * 1024
#: at most this many layers of encoding (each is a decoder in memory)
MAX_LAYERS = 8


class _Layer:
    """One Content-Encoding, decoded in pieces of at most PIECE bytes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.first = True
        self.ended = False
        wbits = zlib.MAX_WBITS | 16 if name in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._z = zlib.decompressobj(wbits)

    def _step(self, data: bytes) -> bytes:
        try:
            out = self._z.decompress(data, PIECE)
        except zlib.error:
            if self.first and self.name == "deflate":
                # "deflate" is often sent raw (no zlib header): as httpx, try that once
                self.first = False
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self._step(data)
            raise
        self.first = False
        return out

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._z.eof:
            return  # bytes after the end of the stream: ignored, as httpx does
        out = self._step(data)
        while True:
            if out:
                yield out
            if self._z.eof or not (self._z.unconsumed_tail or len(out) == PIECE):
                return
            out = self._step(self._z.unconsumed_tail)

    def end(self) -> Iterator[bytes]:
        while not self._z.eof:
            out = self._step(b"")
            if not out:
                return
            yield out


class Meter:
    """Decoded bytes per layer since the last `reset()` (the last entry is the answer's own)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def reset(self) -> None:
        self.sizes = [0] * len(self.sizes)


def encodings(response: httpx.Response) -> list[str]:
    """The answer's encodings that mcptask decodes, in the order they were applied
    (others, `identity` among them, are passed through as httpx does)."""
    names = [
        v.strip().lower()
        for v in response.headers.get_list("content-encoding", split_commas=True)
        if v.strip()
    ]
    return [n for n in names if n in ("gzip", "x-gzip", "deflate")]


async def decoded(
    response: httpx.Response,
    cap: int,
    too_big: Callable[[], Exception],
    meter: Meter | None = None,
) -> AsyncIterator[bytes]:
    """The decoded body of `response` in pieces; `too_big()` is raised as soon as the answer,
    or any layer of its encoding, passes `cap` bytes (since `meter.reset()`); a body that is
    not what its Content-Encoding says raises `ProtocolError`."""
    try:
        content = response.content  # read (and decoded by httpx) already: a test's answer
    except httpx.ResponseNotRead:
        pass
    else:
        if len(content) > cap:
            raise too_big()
        yield content
        return
    names = encodings(response)
    where = urls.origin(str(response.request.url)) if _has_request(response) else "the server"
    if len(names) > MAX_LAYERS:
        raise ProtocolError(
            f"{where} sent an answer with {len(names)} layers of Content-Encoding "
            f"(at most {MAX_LAYERS} are decoded)"
        )
    layers = [_Layer(n) for n in reversed(names)]  # the last applied is undone first
    meter = meter if meter is not None else Meter()
    meter.sizes = [0] * (len(layers) + 1)

    def count(i: int, piece: bytes) -> None:
        meter.sizes[i] += len(piece)
        if meter.sizes[i] > cap:
            raise too_big()

    def through(i: int, piece: bytes) -> Iterator[bytes]:
        """`piece` (the output of layer i-1) through layers i.. to the answer's bytes."""
        if i == len(layers):
            count(i, piece)
            yield piece
            return
        for out in layers[i].feed(piece):
            count(i, out)
            yield from through(i + 1, out)

    def ending(i: int) -> Iterator[bytes]:
        if i == len(layers):
            return
        for out in layers[i].end():
            count(i, out)
            yield from through(i + 1, out)
        yield from ending(i + 1)

    try:
        async for raw in response.aiter_raw():
            for piece in through(0, raw):
                yield piece
        for piece in ending(0):
            yield piece
    except zlib.error as exc:
        raise ProtocolError(
            f"{where} sent an answer that is not valid {'/'.join(names)} (Content-Encoding): {exc}"
        ) from None


def _has_request(response: httpx.Response) -> bool:
    try:
        response.request  # noqa: B018 - raises RuntimeError when the response has none
    except RuntimeError:
        return False
    return True
