"""Renders the report and every chart in headless Chromium and checks them.

usage: browser_render.py CLI FIXTURE_WRITER WORKDIR [--save PATH]
For the test fixture and for a real emulated results.json (data/ beside this
script), at 1400 and 800 px wide: the report does not overflow horizontally,
every chart in it is laid out within the window with its points, and the
screenshots of the report and of each chart on its own are not blank.  The
report itself has no script: a copy with a probe script appended measures the
layout and Chromium's --dump-dom reads the result back.
Exit 0 pass, 1 fail, 77 skip (no Chromium: ctest reports it as skipped).
The screenshots are read with Pillow (scripts/setup installs it).
--save PATH copies the 1400-px screenshot of the emulated run's report there
(docs/report-screenshot.png).
"""
import json
import os
import re
import shutil
import subprocess
import sys

from PIL import Image, ImageChops  # scripts/setup installs pillow

SKIP = 77


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


PROBE = """<script>
window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure.chart")].map(f => {
    const r = f.querySelector("svg").getBoundingClientRect();
    return {id: f.id, right: r.right, width: r.width, height: r.height,
            points: f.querySelectorAll(".kernel-point").length};
  });
  const table = document.querySelector(".ktable");
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    tableRight: table ? table.getBoundingClientRect().right : 0, figures});
  document.body.appendChild(probe);
});
</script>"""


def chromium_run(chromium, work, width, height, url, *args):
    return subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--user-data-dir={os.path.join(work, 'profile')}",
                           f"--window-size={width},{height}", *args, url],
                          check=True, capture_output=True, timeout=120, text=True)


def pixel_stats(png):
    """(share of non-white pixels, variance of grey, pixels of the banner's red).

    Grey is the plain mean of R, G and B.  Pillow does the per-pixel work (the
    pure-Python PNG decoder it replaced took about 35 s of this test's 50)."""
    with Image.open(png) as image:
        rgb = image.convert("RGB")
    grey = rgb.convert("L", matrix=(1 / 3, 1 / 3, 1 / 3, 0))
    counts = grey.histogram()
    pixels = rgb.width * rgb.height
    mean = sum(g * n for g, n in enumerate(counts)) / pixels
    variance = sum(g * g * n for g, n in enumerate(counts)) / pixels - mean * mean
    non_white = sum(counts[:240])
    # The emulator banner, #b00020: r > 150, g < 40, b < 60.
    r, g, b = (band.point(lambda v, t=t: 255 if t(v) else 0)
               for band, t in zip(rgb.split(), (lambda v: v > 150, lambda v: v < 40,
                                               lambda v: v < 60)))
    red = ImageChops.multiply(ImageChops.multiply(r, g), b)
    banner_red = red.histogram()[255]
    return non_white / pixels, variance, banner_red


def check_report(chromium, work, report, width, label, charts=True):
    """The layout probe: nothing wider than the window, every chart sized and populated."""
    probe_copy = report.replace(".html", f"-probe{width}.html")
    html = open(report, encoding="utf-8").read()
    if "<script" in html:
        print(f"FAILED: {label}: the report carries a script")
        return False
    open(probe_copy, "w", encoding="utf-8").write(html.replace("</body>", PROBE + "</body>"))
    dom = chromium_run(chromium, work, width, 900, "file://" + os.path.abspath(probe_copy),
                       "--virtual-time-budget=10000", "--dump-dom").stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    if not found:
        print(f"FAILED: {label} at {width}px: the layout probe did not run")
        return False
    probe = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    ok = True
    print(f"{label} at {width}px: document {probe['scrollWidth']}px in a {probe['innerWidth']}px "
          f"window, kernel table ends at {probe['tableRight']:.0f}px, "
          f"{len(probe['figures'])} charts")
    if probe["scrollWidth"] > probe["innerWidth"] or probe["tableRight"] > probe["innerWidth"]:
        print(f"FAILED: {label} at {width}px overflows horizontally")
        ok = False
    if charts and not probe["figures"]:
        print(f"FAILED: {label}: no chart in the report")
        ok = False
    for f in probe["figures"]:
        if f["right"] > probe["innerWidth"] + 0.5 or f["height"] < 150 or f["points"] == 0:
            print(f"FAILED: {label} at {width}px: chart {f['id']} is {f['width']:.0f}x"
                  f"{f['height']:.0f}, ends at {f['right']:.0f}px, {f['points']} points")
            ok = False
    return ok


def check_png(png, label, banner):
    share, variance, banner_red = pixel_stats(png)
    print(f"{label}: non-white {share:.1%}, grey variance {variance:.0f}, banner pixels {banner_red}")
    ok = True
    if share < 0.02 or variance < 100:
        print(f"FAILED: {label} is (nearly) blank")
        ok = False
    if banner and banner_red < 2000:
        print(f"FAILED: {label}: the red 'CPU emulator' banner was not rendered")
        ok = False
    return ok


def main():
    cli, writer, work = sys.argv[1:4]
    save = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--save" else None
    chromium = find_chromium()
    if not chromium:
        print("SKIPPED: no chromium/google-chrome on PATH (scripts/setup installs Debian's chromium)")
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fixture = os.path.join(work, "fixture.json")
    subprocess.run([writer, "emulator", fixture], check=True)
    emulated = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                            "emulated_small_results.json")
    ok = True
    for name, results in (("fixture", fixture), ("emulated", emulated)):
        report = os.path.join(work, f"{name}-report.html")
        subprocess.run([cli, "report", results, "-o", report], check=True,
                       stdout=subprocess.DEVNULL)
        for width in (1400, 800):
            ok &= check_report(chromium, work, report, width, f"{name} report")
            png = os.path.join(work, f"{name}-report-{width}.png")
            chromium_run(chromium, work, width, 1700, "file://" + os.path.abspath(report),
                         f"--screenshot={png}")
            ok &= check_png(png, f"{name} report at {width}px", banner=True)
        # Every chart on its own, as `roofline plot --view` writes it.
        html = open(report, encoding="utf-8").read()
        views = list(dict.fromkeys(re.findall(r'<svg [^>]*data-view="([^"]+)"', html)))
        for view in views:
            svg = os.path.join(work, f"{name}-{view.replace(':', '-')}.svg")
            subprocess.run([cli, "plot", results, "-o", svg, "--view", view], check=True,
                           stdout=subprocess.DEVNULL)
            png = svg[:-4] + ".png"
            chromium_run(chromium, work, 1000, 660, "file://" + os.path.abspath(svg),
                         f"--screenshot={png}")
            ok &= check_png(png, f"{name} chart {view}", banner=True)
            if 'class="kernel-point"' not in open(svg, encoding="utf-8").read():
                print(f"FAILED: {name} chart {view} has no kernel point")
                ok = False
        if ok and save and name == "emulated":
            shutil.copyfile(os.path.join(work, f"{name}-report-1400.png"), save)
            print(f"saved {save}")
    # roofline compare --format html: the gate's page fits both widths too.
    base, slow = os.path.join(work, "compare-base.json"), os.path.join(work, "compare-slow.json")
    subprocess.run([writer, "compare-base", base], check=True)
    subprocess.run([writer, "compare-slow", slow], check=True)
    page = os.path.join(work, "compare.html")
    with open(page, "w", encoding="utf-8") as out:
        gate = subprocess.run([cli, "compare", base, slow, "--format", "html"], stdout=out)
    if gate.returncode != 1:
        print(f"FAILED: compare of a 10% slowdown exited {gate.returncode}, expected 1")
        ok = False
    for width in (1400, 800):
        ok &= check_report(chromium, work, page, width, "compare page", charts=False)
        png = os.path.join(work, f"compare-{width}.png")
        chromium_run(chromium, work, width, 900, "file://" + os.path.abspath(page),
                     f"--screenshot={png}")
        ok &= check_png(png, f"compare page at {width}px", banner=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
