#!/usr/bin/env python3
"""Checks report.html as Chromium lays it out (issue 16 §6).

check_page.py DOM.html SHOT.png
  DOM.html: `chromium --dump-dom` of a copy of report.html with probe.js appended: the probe
            writes the bounding boxes of the elements checked here into <pre id='probe'>.
  SHOT.png: a 1280x1400 screenshot of the unmodified page.
Asserts: the read-problem box, the stage split and the top kernels sit above the fold (800 px);
the roofline ceiling labels do not overlap; the legend has one entry per point colour and every
legend colour is painted in the screenshot; the page is not blank; a timeline with stream lanes,
a time axis and idle gaps marked; the gap analysis; no scientific notation; shortened names
whose full name is on hover; no table row wrapped over several lines.
"""
import json
import re
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    colors = {}
    for line in rows:
        for i in range(0, stride, bpp):
            k = bytes(line[i:i + 3])
            colors[k] = colors.get(k, 0) + 1
    return w, h, colors


def overlap(a, b):
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def main(dom_path, png_path):
    dom = open(dom_path).read()
    found = re.findall(r"<pre id=\"probe\">(\{.*?)</pre>", dom, re.S)
    assert found, "probe output missing (did the script run?)"
    probe = json.loads(found[-1].replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    for key in ("stage-split", "top-kernels", "input-problems"):
        box = probe.get(key)
        if key == "input-problems" and box is None:
            continue
        assert box and box["w"] > 0 and box["h"] > 0, f"#{key} not laid out"
        assert box["y"] + box["h"] <= 800, f"#{key} ends at {box['y'] + box['h']:.0f} px: below the fold"
    labels = probe["ceilings"]
    assert labels, "no ceiling labels"
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            assert not overlap(labels[i], labels[j]), f"ceiling labels overlap: {labels[i]} {labels[j]}"
    legend, points = set(probe["legend"]), set(probe["points"])
    assert points and points <= legend, f"point colours {points} not all in the legend {legend}"
    # Issue 33: a real timeline (lanes per stream over a time axis, the largest idle gaps marked),
    # the gap analysis (histogram and largest gaps), SI numbers, short names with the full one on hover.
    assert probe["timeline"] and probe["timeline"]["w"] > 0, "#timeline not laid out"
    lanes = [t for t in probe["lane_labels"] if t.startswith("dev ")]
    assert lanes, f"no stream lanes: {probe['lane_labels']}"
    assert len(probe["ticks"]) >= 3 and any(re.search(r"[0-9] [µmn]?s$", t) for t in probe["ticks"]), probe["ticks"]
    assert probe["idle_gaps"] >= 1, "no idle gap marked on the timeline"
    assert probe["gap_histogram_rows"] >= 1 and probe["gap_rows"] >= 1, "gap analysis tables empty"
    sci = [c for c in probe["cells"] if re.search(r"[0-9][eE][-+][0-9]", c)]
    assert not sci, f"numbers in scientific notation: {sci[:5]}"
    names = probe["names"]
    assert names and all(n["title"] and len(n["title"]) >= len(n["text"]) for n in names), "a name cell without its full name"
    elided = [n for n in names if "…" in n["text"]]
    assert elided, "no long name was shortened"
    for n in elided:
        head, tail = n["text"].split("…", 1)
        assert n["title"].startswith(head) and n["title"].endswith(tail), n
    tall = [r for r in probe["rows"] if r["h"] > 30]
    assert not tall, f"table rows wrapped over several lines: {tall[:5]}"
    w, h, colors = read_png(png_path)
    assert len(colors) > 20, "blank screenshot"
    for c in legend:
        rgb = bytes.fromhex(c.lstrip("#"))
        assert colors.get(rgb, 0) >= 5, f"legend colour {c} not painted"
    assert colors.get(bytes.fromhex("4e79a7"), 0) >= 50, "timeline lanes not painted"
    print(f"ok: {len(labels)} ceiling labels, {len(legend)} categories, stage split and top kernels above the fold; "
          f"timeline: {len(lanes)} lanes, {len(probe['ticks'])} ticks, {probe['idle_gaps']} idle gaps marked; "
          f"gap table {probe['gap_rows']} rows; {len(elided)} names shortened")


if __name__ == "__main__":
    main(*sys.argv[1:3])
