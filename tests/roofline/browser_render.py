"""Renders report.html in headless Chromium and checks the PNG is not blank.

usage: browser_render.py CLI FIXTURE_WRITER WORKDIR [--save PATH]
Exit 0 pass, 1 fail, 77 skip (no Chromium: ctest reports it as skipped).
The PNG is decoded with the standard library (zlib), no imaging package.
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def decode_png(path):
    """Returns (width, height, channels, rows of bytes) for 8-bit RGB/RGBA PNGs."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour {colour}, interlace {interlace})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main():
    cli, writer, work = sys.argv[1:4]
    save = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--save" else None
    chromium = find_chromium()
    if not chromium:
        print("SKIPPED: no chromium/google-chrome on PATH (Debian: apt-get install chromium)")
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    results = os.path.join(work, "results.json")
    report = os.path.join(work, "report.html")
    png = os.path.join(work, "report.png")
    subprocess.run([writer, "emulator", results], check=True)
    subprocess.run([cli, "report", results, "-o", report], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={os.path.join(work, 'profile')}", "--window-size=1280,1700",
                    f"--screenshot={png}", "file://" + os.path.abspath(report)],
                   check=True, capture_output=True, timeout=120)
    width, height, channels, rows = decode_png(png)
    pixels = width * height
    non_white = banner_red = 0
    total = total_sq = 0
    for row in rows:
        for i in range(0, len(row), channels):
            r, g, b = row[i], row[i + 1], row[i + 2]
            grey = (r + g + b) / 3
            total += grey
            total_sq += grey * grey
            if grey < 240:
                non_white += 1
            if r > 150 and g < 40 and b < 60:  # the emulator banner, #b00020
                banner_red += 1
    mean = total / pixels
    variance = total_sq / pixels - mean * mean
    print(f"{png}: {width}x{height}, non-white {non_white / pixels:.1%}, "
          f"grey variance {variance:.0f}, banner pixels {banner_red}")
    ok = True
    if non_white / pixels < 0.02 or variance < 100:
        print("FAILED: the rendered report is (nearly) blank")
        ok = False
    if banner_red < 2000:
        print("FAILED: the red 'CPU emulator' banner was not rendered")
        ok = False
    if ok and save:
        shutil.copyfile(png, save)
        print(f"saved {save}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
