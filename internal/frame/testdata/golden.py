#!/usr/bin/python3
"""Regenerates the resize and JPEG goldens from screen.png with Pillow, exactly as the reference
pipeline (/work/shared/bench/reference_pipeline.py) does: Image.resize(size, BILINEAR), then
save(format="JPEG", quality=72). Run with Debian's /usr/bin/python3 (python3-pil).

Writes:
  screen_960x540.png      screen.png resized to 960x540 (BILINEAR)
  screen_960x540_q72.jpg  that image as JPEG quality 72
  resize_golden.json      for crops of screen.png resized to many sizes (down and up, odd, 1 px):
                          the SHA-256 of Pillow's RGB output bytes
"""
import hashlib
import io
import json
import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))

# (crop x, y, w, h) -> list of (target w, h)
CASES = [
    ((0, 0, 1280, 720), [(960, 540), (640, 360), (1279, 719), (333, 187), (1, 1), (1280, 1), (1, 720),
                         (1281, 721), (1920, 1080), (961, 541), (100, 720), (1280, 50)]),
    ((37, 11, 901, 613), [(960, 653), (451, 307), (900, 612), (17, 5), (1802, 1226), (901, 200)]),
    ((640, 360, 7, 3), [(3, 2), (14, 6), (7, 3), (1, 1), (29, 31)]),
    ((1000, 100, 280, 620), [(155, 343), (960, 2125)]),
]


def main():
    src = Image.open(os.path.join(HERE, "screen.png")).convert("RGB")
    small = src.resize((960, 540), Image.BILINEAR)
    small.save(os.path.join(HERE, "screen_960x540.png"))
    buf = io.BytesIO()
    small.save(buf, format="JPEG", quality=72)
    with open(os.path.join(HERE, "screen_960x540_q72.jpg"), "wb") as f:
        f.write(buf.getvalue())
    out = []
    for (x, y, w, h), sizes in CASES:
        crop = src.crop((x, y, x + w, y + h))
        for tw, th in sizes:
            r = crop.resize((tw, th), Image.BILINEAR)
            out.append({"crop": [x, y, w, h], "size": [tw, th],
                        "sha256": hashlib.sha256(r.tobytes()).hexdigest()})
    with open(os.path.join(HERE, "resize_golden.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
