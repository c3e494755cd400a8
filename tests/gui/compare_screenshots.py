#!/usr/bin/env python3
"""Screenshots of comparing runs in the front end for docs/GUI.md, made by the program itself.

Generates three jobs with the job generator (two 4-rank runs of one model that differ in seed, layers and
steps; a 4-stage 1F1B pipeline), then: the Summary compared with a baseline and the timeline with the baseline's
rows stacked (plain headless `--screenshot`), and with the real X mouse (xdotool, as
tests/gui/feature_screenshots.py does): the measured pipeline in the Explorer after "Predict this pipeline", and
the critical path of a selected step.

    tests/gui/compare_screenshots.py build/meshscope build/meshscope_gen_job docs/screenshots
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from feature_screenshots import feature, row, x_of  # noqa: E402


def main():
    binary, gen_job, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp()
    jobs = {
        "a": "--ranks 4 --tp 2 --layers 2 --steps 3 --seed 1",
        "b": "--ranks 4 --tp 2 --layers 3 --steps 4 --seed 2",
        "pp4": "--ranks 4 --tp 1 --pp 4 --micro-batches 8 --layers 4 --steps 2 --seed 3",
    }
    path = {}
    for name, args in jobs.items():
        path[name] = os.path.join(work, name + ".msdb")
        subprocess.run([gen_job, *args.split(), "--format", "msdb", "-q", "-o", path[name]], check=True)
    env = dict(os.environ)
    env.pop("DISPLAY", None)

    def shot(name, *args):
        subprocess.run([binary, "view", *args, "--screenshot", os.path.join(out, name)], env=env, check=True)

    shot("summary-baseline.png", path["b"], "--baseline", path["a"], "--panel", "summary", "--size", "1600x900")
    shot("timeline-baseline.png", path["b"], "--baseline", path["a"], "--stack-baseline", "--range", "0:75",
         "--size", "1600x900")

    def pipeline(app):
        # "Predict this pipeline": the predicted pipeline above takes the measured one's shape.
        s = app.wait(lambda s: not s["loading"] and s["explorer"]["pipeline_measured"]["button"][2] > 0)
        time.sleep(0.4)
        s = app.state()
        b = s["explorer"]["pipeline_measured"]["button"]
        app.click((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
        app.wait(lambda s: s["explorer"]["PP"] == 4)
        app.move(150, 900)  # an empty part of the layout column

    feature(binary, path["pp4"], out, "explorer-pipeline-measured.png", ["--panel", "explorer"], pipeline,
            size="1600x1000")

    def critical(app):
        s = app.loaded()
        r = row(s, "steps", 0)
        # Step 13 of rank 0 (the second step) is in the middle of the window.
        app.click(x_of(s, (s["timeline"]["t0_ns"] + s["timeline"]["t1_ns"]) // 2), r["y"] + r["lane_h"] / 2)
        app.wait(lambda s: s["timeline"]["selected"]["kind"] == "step")
        time.sleep(0.4)
        app.move(s["timeline"]["canvas"]["x1"] - 5, s["timeline"]["canvas"]["ruler_y0"] - 30)

    feature(binary, path["b"], out, "timeline-critical-path.png", ["--critical-path", "--range", "30:67"],
            critical)


if __name__ == "__main__":
    main()
