"""Posts one screen event to a relay with sinain-hud's sense_client sender,
as written (../sinain-hud/sense_client): SenseSender.send, with the ROI and
the diff image packaged by its own package_roi and package_diff (PIL).

The rest of the sense client needs macOS screen capture; only its HTTP
posting code runs here. gate.py (which defines SenseEvent) imports
ChangeResult from change_detector.py for a type annotation; that module
needs scikit-image for SSIM, which this test does not use, so a stand-in
module with the same ChangeResult is registered first.

usage: python3 sense.py RELAY_URL   prints {"ok": <what send returned>}
"""

import dataclasses
import json
import os
import sys
import time
import types
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sinain-hud"))

stand_in = types.ModuleType("sense_client.change_detector")


@dataclasses.dataclass
class ChangeResult:
    ssim_score: float
    diff_image: object
    contours: list
    bbox: tuple


stand_in.ChangeResult = ChangeResult
sys.modules["sense_client.change_detector"] = stand_in

from PIL import Image, ImageDraw  # noqa: E402

from sense_client.gate import SenseEvent, SenseMeta  # noqa: E402
from sense_client.sender import SenseSender, package_diff, package_roi  # noqa: E402

roi_image = Image.new("RGB", (160, 90), "white")
ImageDraw.Draw(roi_image).rectangle((10, 10, 150, 40), fill="black")
diff_image = Image.new("L", (64, 64), 0)
ImageDraw.Draw(diff_image).rectangle((8, 8, 40, 40), fill=255)

event = SenseEvent(
    type="text",
    ts=int(time.time() * 1000),
    ocr="export function buildContextWindow(feedBuffer, senseBuffer) {",
    roi=package_roi(SimpleNamespace(image=roi_image, bbox=(10, 20, 160, 90))),
    diff=package_diff(diff_image),
    meta=SenseMeta(ssim=0.85, app="idea", window_title="hud-relay.mjs", screen=0),
)
print(json.dumps({"ok": SenseSender(url=sys.argv[1]).send(event)}))
