#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks a screenshot is a drawn page, with the standard library only (no PIL).

usage: png_check.py PNG WIDTH [--colour RRGGBB:MIN ...] [--decode]

Prints the image's size and its file size against the same image all white,
compressed by zlib at level 9 (a blank page compresses to about that: the
page's is required to be 5 times larger).  With --decode (or any --colour) the
pixels are decoded (PNG filters 0-4, 8-bit RGB or RGBA, ISO/IEC 15948 6.3 and
9) and every 4th pixel of each row counted: at least 16 distinct colours, and
each --colour at least MIN of the counted pixels.  Exit 1 naming what failed."""
import argparse
import struct
import sys
import zlib


def chunks(data):
    pos = 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + n]
        pos += 12 + n


def decode(w, h, bpp, raw):
    """Counts every 4th pixel's RGB of each row."""
    stride, prev, colours = w * bpp, bytearray(w * bpp), {}
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        for x in range(0, stride, 4 * bpp):
            k = bytes(line[x:x + 3])
            colours[k] = colours.get(k, 0) + 1
    return colours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("png")
    ap.add_argument("width", type=int)
    ap.add_argument("--colour", action="append", default=[])
    ap.add_argument("--decode", action="store_true")
    a = ap.parse_args()
    data = open(a.png, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        print("not a PNG: %s" % a.png)
        return 1
    idat, w = b"", 0
    for kind, chunk in chunks(data):
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
    bpp = {2: 3, 6: 4}.get(ctype)
    if depth != 8 or bpp is None:
        print("a PNG of depth %d, colour type %d: not checked" % (depth, ctype))
        return 1
    white = len(zlib.compress((b"\0" + b"\xff" * (w * bpp)) * h, 9)) + 100
    print("%s: %dx%d, %d bytes, %d all white" % (a.png, w, h, len(data), white))
    bad = []
    if w != a.width:
        bad.append("width %d, not %d" % (w, a.width))
    if len(data) < 5 * white:
        bad.append("%d bytes: blank (all white is %d)" % (len(data), white))
    if a.decode or a.colour:
        colours = decode(w, h, bpp, zlib.decompress(idat))
        print("%d distinct colours" % len(colours))
        if len(colours) < 16:
            bad.append("%d colours: not a drawn page" % len(colours))
        for spec in a.colour:
            rgb, least = spec.split(":")
            n = colours.get(bytes.fromhex(rgb), 0)
            print("#%s: %d pixels counted" % (rgb, n))
            if n < int(least):
                bad.append("#%s in %d pixels, fewer than %s" % (rgb, n, least))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
