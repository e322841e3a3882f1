"""A small PNG decoder and encoder in pure Python, so the in-memory host can make the downscaled copies
``jupyter_get_output`` returns (:meth:`host_memory.MemoryNotebook.encode_output_image`).

Why our own: the in-memory host is the reference behaviour and the test stand-in, and runs under plain CPython
with the standard library only (the test harness needs no imaging library; the browser tests decode the page's
pictures with it too); in the page the browser itself decodes,
resamples and encodes (``lab/notebook.js``). This covers what notebooks hold: non-interlaced PNGs of 8 or 16 bits
per sample, grey, RGB, palette, grey+alpha and RGBA (the five filter types of the PNG specification, section 9).
Resampling is by the nearest pixel (the browser's is smoothed); the copy is RGBA, 8 bits, unfiltered rows,
zlib-compressed. Other inputs (interlaced, under 8 bits a sample, other formats) return None: no copy.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: samples per pixel by colour type (PNG spec, table 11.1)
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _chunks(data: bytes):
    at = len(SIGNATURE)
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        yield kind, data[at + 8 : at + 8 + length]
        at += 12 + length


def _unfilter(raw: bytes, height: int, stride: int, bpp: int) -> list[bytearray] | None:
    """The scanlines of ``raw`` (each a filter byte then ``stride`` bytes) with their filters undone."""
    rows: list[bytearray] = []
    prior = bytearray(stride)
    at = 0
    for _ in range(height):
        kind = raw[at]
        line = bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        if len(line) != stride:
            return None
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prior, strict=True))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prior[i]
                c = prior[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            return None
        rows.append(line)
        prior = line
    return rows


def decode(data: bytes) -> tuple[int, int, list[bytearray]] | None:
    """``(width, height, rows)`` with each row ``width * 4`` bytes of RGBA, or None for a PNG this reader does not
    take (or not a PNG)."""
    if not data.startswith(SIGNATURE):
        return None
    header = palette = None
    alpha = b""
    idat = bytearray()
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            header = body
        elif kind == b"PLTE":
            palette = body
        elif kind == b"tRNS":
            alpha = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if header is None or len(header) != 13:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if (
        colour not in CHANNELS
        or depth not in (8, 16)
        or interlace != 0
        or (colour == 3 and (depth != 8 or not palette))
    ):
        return None
    sample = depth // 8
    bpp = CHANNELS[colour] * sample
    try:
        raw = zlib.decompress(bytes(idat))
    except zlib.error:
        return None
    rows = _unfilter(raw, height, width * bpp, bpp)
    if rows is None:
        return None
    out: list[bytearray] = []
    for line in rows:
        samples = line[::2] if sample == 2 else line  # 16 bits: the high byte of each sample
        if colour == 6:
            rgba = bytearray(samples)
        elif colour == 2:
            rgba = bytearray(width * 4)
            rgba[0::4], rgba[1::4], rgba[2::4] = samples[0::3], samples[1::3], samples[2::3]
            rgba[3::4] = b"\xff" * width
        elif colour == 0:
            rgba = bytearray(width * 4)
            rgba[0::4] = rgba[1::4] = rgba[2::4] = samples
            rgba[3::4] = b"\xff" * width
        elif colour == 4:
            rgba = bytearray(width * 4)
            rgba[0::4] = rgba[1::4] = rgba[2::4] = samples[0::2]
            rgba[3::4] = samples[1::2]
        else:  # palette
            rgba = bytearray(width * 4)
            for x, index in enumerate(samples):
                rgba[4 * x : 4 * x + 3] = palette[3 * index : 3 * index + 3].ljust(3, b"\x00")  # type: ignore[index]
                rgba[4 * x + 3] = alpha[index] if index < len(alpha) else 0xFF
        out.append(rgba)
    return width, height, out


def resample(width: int, height: int, rows: list[bytearray], new_width: int, new_height: int) -> list[bytes]:
    """RGBA ``rows`` of a ``width`` x ``height`` image resampled to ``new_width`` x ``new_height`` (nearest pixel)."""
    columns = [min(width - 1, (2 * x + 1) * width // (2 * new_width)) for x in range(new_width)]
    picked: list[bytes] = []
    for y in range(new_height):
        row = rows[min(height - 1, (2 * y + 1) * height // (2 * new_height))]
        picked.append(b"".join(row[4 * x : 4 * x + 4] for x in columns))
    return picked


def encode(width: int, height: int, rows: list[bytes]) -> bytes:
    """An RGBA PNG (8 bits a sample, no filter) of ``rows``."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
