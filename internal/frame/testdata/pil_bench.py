#!/usr/bin/python3
"""Times the reference pipeline's frame stages (BGRX -> RGB via numpy, PIL BILINEAR resize to
<= 960, JPEG q72) on the same content as the Go benchmarks (screen.png at 1280x720, and tiled to
1920x1080 exactly like bench_test.go's benchScreen), reporting the median wall time and the median
process CPU time per stage in ms. Run with Debian's /usr/bin/python3:
    /usr/bin/python3 internal/frame/testdata/pil_bench.py [frames=50]
"""
import io
import os
import statistics
import sys
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def screen(w, h):
    src = np.asarray(Image.open(os.path.join(HERE, "screen.png")).convert("RGB"))
    sh, sw = src.shape[:2]
    out = np.empty((h, w, 4), dtype=np.uint8)
    for y in range(h):
        xs = (np.arange(w) + (y // sh) * 300) % sw
        out[y, :, :3] = src[y % sh, xs, ::-1]  # BGR
        out[y, :, 3] = 0x55  # garbage pad byte
    return out.tobytes()


def target_size(w, h, max_dim):
    if max(w, h) <= max_dim:
        return w, h
    s = max_dim / float(max(w, h))
    return max(1, int(round(w * s))), max(1, int(round(h * s)))


def main():
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    for w, h in ((1280, 720), (1920, 1080)):
        data = screen(w, h)
        tw, th = target_size(w, h, 960)
        wall = {k: [] for k in ("convert", "resize", "encode", "total")}
        cpu = {k: [] for k in wall}
        for i in range(frames + 3):
            t = [(time.perf_counter_ns(), time.process_time_ns())]
            bgr = np.frombuffer(data, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
            img = Image.fromarray(np.ascontiguousarray(bgr[:, :, ::-1]), "RGB")
            t.append((time.perf_counter_ns(), time.process_time_ns()))
            small = img.resize((tw, th), Image.BILINEAR)
            t.append((time.perf_counter_ns(), time.process_time_ns()))
            buf = io.BytesIO()
            small.save(buf, format="JPEG", quality=72)
            t.append((time.perf_counter_ns(), time.process_time_ns()))
            if i < 3:
                continue
            for k, a, b in (("convert", 0, 1), ("resize", 1, 2), ("encode", 2, 3), ("total", 0, 3)):
                wall[k].append((t[b][0] - t[a][0]) / 1e6)
                cpu[k].append((t[b][1] - t[a][1]) / 1e6)
        print("%dx%d -> %dx%d  jpeg=%d B  frames=%d" % (w, h, tw, th, len(buf.getvalue()), frames))
        for k in wall:
            print("  %-8s wall median %7.2f ms   cpu median %7.2f ms" % (
                k, statistics.median(wall[k]), statistics.median(cpu[k])))


if __name__ == "__main__":
    main()
