"""Images an agent can use: the size of a stored image, read from its header, and the copies the bridge returns.

An output's image can be megabytes of base64 arriving as one JSON string, so ``jupyter_get_output`` returns by
default a copy bounded in longest side and bytes. These rules plan the copies; a host makes them
(:meth:`webmcp_bridge.host.protocol.LiveNotebook.encode_output_image`; in the page, off the main thread).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Literal

#: bytes of an image's start read to find its width and height (a JPEG's SOF segment can follow metadata)
HEADER_BYTES = 64 * 1024
MAX_ATTEMPTS = 4  #: copies made for one request at most, each smaller than the last
MIN_SIDE = 32  #: the smallest longest side a copy is made at, in pixels
LOSSY_QUALITY = 0.85  #: quality (0..1) of a lossy copy (JPEG, WebP), as the browser's encoder takes it
SHRINK_MARGIN = 0.9  #: each retry aims this far under the byte bound (encoded sizes do not scale exactly with the area)
#: lossy formats, encoded as stored; every other one (GIF: browsers encode no GIF) is copied as PNG
LOSSY = frozenset({"image/jpeg", "image/webp"})
#: the format a PNG copy over the byte bound is made in next, at the same size, before any smaller copy
LOSSY_FALLBACK = "image/webp"


@dataclass(frozen=True)
class ImageInfo:
    """A stored image: its MIME type, size in pixels and decoded size in bytes."""

    mime: str
    width: int
    height: int
    bytes: int

    def to_json(self) -> dict[str, object]:
        return {"mimeType": self.mime, "width": self.width, "height": self.height, "bytes": self.bytes}


@dataclass(frozen=True)
class ImageRequest:
    """A copy to make: ``width`` x ``height`` pixels (the whole image resampled), encoded as ``mime`` (at
    ``quality`` 0..1 for a lossy format, else None)."""

    width: int
    height: int
    mime: str
    quality: float | None = None


@dataclass(frozen=True)
class EncodedImage:
    """A copy a host made: base64 ``data`` of ``bytes`` decoded bytes, ``width`` x ``height`` pixels, ``mime``
    (what the encoder really produced)."""

    data: str
    bytes: int
    width: int
    height: int
    mime: str


@dataclass(frozen=True)
class OutputCapture:
    """A picture the page took of one output as the person sees it (``NotebookView.capture_output``).

    ``status``: "ok" (held under ``key`` until released), "empty" (renders nothing), or "unavailable" with a
    ``reason``: "not-shown" (scrolled out, collapsed, off screen), "no-renderer", "too-large" (more nodes than the
    page copies) or "failed". ``mime``: the type it was rendered from; ``width`` x ``height``: its size on screen
    (CSS pixels); ``picture_width`` x ``picture_height``: the picture held (smaller past the capture bound)."""

    status: Literal["ok", "empty", "unavailable"]
    mime: str = ""
    width: int = 0
    height: int = 0
    picture_width: int = 0
    picture_height: int = 0
    key: str = ""
    reason: str = ""


def image_size(mime: str, head: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels of an image of type ``mime`` from the first bytes of its file (PNG's IHDR, GIF's
    screen, JPEG's first SOF, WebP's VP8/VP8L/VP8X); None when ``head`` does not parse or a side is zero."""
    size: tuple[int, int] | None = None
    if mime == "image/png" and head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and len(head) >= 24:
        size = struct.unpack(">II", head[16:24])
    elif mime == "image/gif" and head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        size = struct.unpack("<HH", head[6:10])
    elif mime == "image/webp":
        size = _webp_size(head)
    elif mime == "image/jpeg":
        size = _jpeg_size(head)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return int(size[0]), int(size[1])


def _webp_size(head: bytes) -> tuple[int, int] | None:
    if head[:4] != b"RIFF" or head[8:12] != b"WEBP" or len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":  # lossy: the key frame's start code, then 14-bit sizes
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and head[20] == 0x2F:  # lossless: signature byte, then 14-bit (size - 1) fields
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: 24-bit (size - 1) fields
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


#: JPEG start-of-frame markers (baseline, extended, progressive, lossless...; not DHT C4, JPG C8, DAC CC)
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    if head[:3] != b"\xff\xd8\xff":
        return None
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        length = struct.unpack(">H", head[at + 2 : at + 4])[0]
        if marker in _SOF:
            if at + 9 > len(head):
                return None
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return width, height
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before it
            return None
        at += 2 + length
    return None


def _scaled(info: ImageInfo, side: float) -> tuple[int, int]:
    scale = min(1.0, side / max(info.width, info.height))
    return max(1, round(info.width * scale)), max(1, round(info.height * scale))


def _request(info: ImageInfo, side: float, mime: str | None = None) -> ImageRequest:
    mime = mime or (info.mime if info.mime in LOSSY else "image/png")
    width, height = _scaled(info, side)
    return ImageRequest(width, height, mime, LOSSY_QUALITY if mime in LOSSY else None)


def first_request(info: ImageInfo, max_side: int, max_bytes: int) -> ImageRequest | None:
    """The first copy of ``info`` for at most ``max_side`` pixels on the longest side (never enlarged) and
    ``max_bytes`` decoded bytes, smaller still when the bytes scaled by the area would be over; None when the original
    fits both and is returned as stored."""
    longest = max(info.width, info.height)
    if longest <= max_side and info.bytes <= max_bytes:
        return None
    side: float = min(max_side, longest)
    if info.bytes * (side / longest) ** 2 > max_bytes:  # bytes grow with the area: aim under the bound at once
        side = max(MIN_SIDE, longest * math.sqrt(max_bytes / info.bytes) * SHRINK_MARGIN)
    return _request(info, side)


def next_request(info: ImageInfo, made: list[tuple[ImageRequest, int]], max_bytes: int) -> ImageRequest | None:
    """The next copy after the copies ``made`` (each with the bytes it came to) were all over ``max_bytes``: a PNG as
    :data:`LOSSY_FALLBACK` at the same size, else smaller by the square root of the ratio; None after
    :data:`MAX_ATTEMPTS` copies or below :data:`MIN_SIDE`."""
    if not made or len(made) >= MAX_ATTEMPTS:
        return None
    last, got = made[-1]
    if last.mime == "image/png" and not any(request.mime == LOSSY_FALLBACK for request, _ in made):
        # a resampled figure gains colours (smoothed edges) and the browser's PNG encoder compresses lightly: the
        # copy can be larger than the original. The same pixels as lossy WebP are a fraction of that.
        return ImageRequest(last.width, last.height, LOSSY_FALLBACK, LOSSY_QUALITY)
    side = max(last.width, last.height) * math.sqrt(max_bytes / max(got, 1)) * SHRINK_MARGIN
    side = min(side, max(last.width, last.height) - 1)  # always smaller than the last copy
    if side < MIN_SIDE:
        return None
    return _request(info, side, last.mime)


def capture_request(width: int, height: int, max_side: int) -> ImageRequest:
    """The first copy of a rendered output's picture: a PNG at most ``max_side`` pixels on its longest side."""
    return _request(ImageInfo("image/png", max(1, width), max(1, height), 0), min(max_side, max(width, height, 1)))
