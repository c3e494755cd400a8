#!/usr/bin/env python3
"""Screenshots of the desktop front end's features for docs/GUI.md, made by the program itself.

Each feature: `meshscope view PROFILE --screenshot OUT.png --interactive` runs on an Xvfb server of its own,
is driven with the real X mouse and keyboard (xdotool) to the state the feature shows, and writes OUT.png
when F12 is pressed. Where to click comes from the state the program reports (MESHSCOPE_STATE_FILE). The
panel screenshots are the plain headless `--screenshot`.

    tests/gui/feature_screenshots.py build-gui/meshscope SAMPLE.msdb docs/screenshots [HTA_TRACE_FILTER.msdb]
"""
import json
import os
import subprocess
import sys
import tempfile
import time


class Xvfb:
    def __init__(self, w, h):
        for n in range(120 + os.getpid() % 300, 1000):
            if os.path.exists(f"/tmp/.X{n}-lock") or os.path.exists(f"/tmp/.X11-unix/X{n}"):
                continue
            self.proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{w}x{h}x24", "-nolisten", "tcp"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(500):
                if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                    self.display = f":{n}"
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.01)
        raise RuntimeError("no Xvfb display")

    def close(self):
        self.proc.terminate()
        self.proc.wait()


class App:
    def __init__(self, binary, x, args, shot):
        self.x, self.shot_path = x, shot
        self.state_file = tempfile.mktemp(suffix=".json")
        env = dict(os.environ, DISPLAY=x.display, MESHSCOPE_STATE_FILE=self.state_file,
                   XDG_CONFIG_HOME=tempfile.mkdtemp())
        self.proc = subprocess.Popen([binary, "view", *args, "--screenshot", shot, "--interactive"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.window = None

    def state(self):
        try:
            with open(self.state_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def wait(self, pred, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            s = self.state()
            try:
                if s and pred(s):
                    return s
            except (KeyError, IndexError, TypeError):
                pass
            time.sleep(0.05)
        raise RuntimeError("timed out waiting; last state: " + json.dumps(self.state())[:1500])

    def loaded(self):
        self.wait(lambda s: not s["loading"] and s["ranks"] > 0 and s["timeline"]["rows"])
        time.sleep(0.6)
        return self.state()

    def xdo(self, *args):
        if self.window is None:
            out = subprocess.run(["xdotool", "search", "--sync", "--name", "^meshscope$"], env=self.env(),
                                 capture_output=True, text=True, check=True).stdout.split()
            self.window = out[0]
        subprocess.run(["xdotool", *[a.replace("WIN", self.window) for a in args]], env=self.env(), check=True)

    def env(self):
        return dict(os.environ, DISPLAY=self.x.display)

    def move(self, x, y):
        self.xdo("mousemove", "--window", "WIN", str(int(x)), str(int(y)))

    def click(self, x, y, button=1):
        self.move(x, y)
        self.xdo("sleep", "0.15", "click", str(button))
        time.sleep(0.3)

    def drag(self, x0, y0, x1, y1, steps=10):
        self.move(x0, y0)
        self.xdo("sleep", "0.1", "mousedown", "1")
        for i in range(1, steps + 1):
            self.move(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
            time.sleep(0.05)
        self.xdo("sleep", "0.1", "mouseup", "1")

    def snap(self):
        if os.path.exists(self.shot_path):
            os.remove(self.shot_path)
        time.sleep(0.5)
        self.xdo("key", "F12")
        for _ in range(200):
            if os.path.exists(self.shot_path) and os.path.getsize(self.shot_path) > 0:
                time.sleep(0.3)
                print("wrote", self.shot_path)
                return
            time.sleep(0.05)
        raise RuntimeError("no screenshot " + self.shot_path)

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def row(s, kind, rank):
    return next(r for r in s["timeline"]["rows"] if r["kind"] == kind and r["rank"] == rank)


def x_of(s, t):
    tl = s["timeline"]
    c = tl["canvas"]
    return c["x0"] + (t - tl["t0_ns"]) / (tl["t1_ns"] - tl["t0_ns"]) * (c["x1"] - c["x0"])


def widest(profile, rank, stream, name_like=None, state=None):
    """(start, end) of the widest activity of RANK's STREAM (its number), optionally with a name LIKE, inside
    the time window STATE shows (when given)."""
    import sqlite3
    db = sqlite3.connect(f"file:{profile}?mode=ro", uri=True)
    q = ("select a.start_ns, a.end_ns from activities a join strings s on s.id = a.name where a.rank = ? and "
         "a.stream = ?" + (" and s.value like ?" if name_like else "") +
         (" and a.start_ns >= ? and a.end_ns <= ?" if state else "") +
         " order by a.end_ns - a.start_ns desc limit 1")
    args = [rank, stream] + ([name_like] if name_like else [])
    if state:
        args += [state["timeline"]["t0_ns"], state["timeline"]["t1_ns"]]
    return db.execute(q, args).fetchone()


def feature(binary, profile, out, name, args, drive, size="1600x900"):
    w, h = (int(v) for v in size.split("x"))
    x = Xvfb(w + 32, h + 32)
    app = App(binary, x, [profile, "--size", size, *args], os.path.join(out, name))
    try:
        drive(app)
        app.snap()
    finally:
        app.close()
        x.close()


def main():
    binary, profile, out = sys.argv[1:4]
    hta = sys.argv[4] if len(sys.argv) > 4 else None
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    for panel in ["timeline", "summary", "roofline", "explorer", "planner"]:
        subprocess.run([binary, "view", profile, "--panel", panel, "--size", "1600x900", "--screenshot",
                        os.path.join(out, panel + ".png")], env=env, check=True)
    subprocess.run([binary, "view", profile, "--panel", "summary", "--size", "1100x700", "--screenshot",
                    os.path.join(out, "summary-1100x700.png")], env=env, check=True)
    if hta:
        subprocess.run([binary, "view", hta, "--panel", "timeline", "--range", "530:620", "--size", "1600x900",
                        "--screenshot", os.path.join(out, "timeline-hta-zoomed.png")], env=env, check=True)

    def selection(app):
        s = app.loaded()
        app.click(s["timeline"]["canvas"]["x0"] - 120, row(s, "cpu_section", 0)["y"] + 6)
        s = app.wait(lambda s: s["timeline"]["cpu_open"][0])
        time.sleep(0.4)
        s = app.state()
        start, end = widest(profile, 0, 7, "%gemm%", s)
        r = row(s, "gpu_stream", 0)
        app.click(x_of(s, (start + end) // 2), r["y"] + r["lane_h"] / 2)
        app.wait(lambda s: s["timeline"]["selected"]["kind"] == "activity")
        app.move(s["timeline"]["canvas"]["x1"] - 5, s["timeline"]["canvas"]["rows_bottom"] - 5)

    feature(binary, profile, out, "timeline-selection.png", ["--range", "60:64"], selection)

    def collective(app):
        s = app.loaded()
        start, end = widest(profile, 2, 23, "%nccl%", s)
        r = row(s, "gpu_stream", 2)
        streams = [q for q in s["timeline"]["rows"] if q["kind"] == "gpu_stream" and q["rank"] == 2]
        r = next(q for q in streams if q["label"].endswith("stream 23"))
        app.click(x_of(s, (start + end) // 2), r["y"] + r["lane_h"] / 2)
        app.wait(lambda s: s["timeline"]["instance"] >= 0)
        app.move(s["timeline"]["canvas"]["x1"] - 5, s["timeline"]["canvas"]["rows_top"] + 5)

    feature(binary, profile, out, "timeline-collective.png", ["--range", "70:110"], collective)

    def range_totals(app):
        s = app.loaded()
        c = s["timeline"]["canvas"]
        y = (c["ruler_y0"] + c["ruler_y1"]) / 2
        app.drag(c["x0"] + 0.36 * (c["x1"] - c["x0"]), y, c["x0"] + 0.62 * (c["x1"] - c["x0"]), y)
        app.wait(lambda s: s["timeline"]["range"]["ready"])
        app.xdo("key", "b")
        app.move(c["x1"] - 5, c["rows_top"] + 5)

    feature(binary, profile, out, "timeline-range.png", [], range_totals)

    def search(app):
        s = app.loaded()
        app.xdo("key", "ctrl+f", "sleep", "0.2", "type", "--delay", "40", "allgather")
        app.xdo("sleep", "0.2", "key", "Return", "sleep", "0.3", "key", "Return", "sleep", "0.3", "key", "Return")
        app.wait(lambda s: s["timeline"]["search"]["cursor"] >= 2)
        app.move(s["timeline"]["canvas"]["x1"] - 5, s["timeline"]["canvas"]["rows_bottom"] - 5)

    feature(binary, profile, out, "timeline-search.png", ["--range", "20:60"], search)

    def pinned(app):
        s = app.loaded()
        # The last rank's communication stream that is on screen (at 700 px high, not every rank's is).
        bottom = s["timeline"]["canvas"]["rows_bottom"]
        r = [q for q in s["timeline"]["rows"] if q["kind"] == "gpu_stream" and q["label"].endswith("stream 23")
             and q["y"] + q["h"] <= bottom][-1]
        app.click(s["timeline"]["canvas"]["x0"] - 80, r["y"] + 5, button=3)
        s = app.wait(lambda s: s["timeline"]["menu"])
        pin = next(m for m in s["timeline"]["menu"] if m["label"] == "Pin to top")
        app.click((pin["x0"] + pin["x1"]) / 2, (pin["y0"] + pin["y1"]) / 2)
        s = app.wait(lambda s: any(q["pinned"] for q in s["timeline"]["rows"]))
        app.click(s["timeline"]["canvas"]["x0"] - 120, row(s, "cpu_section", 0)["y"] + 6)
        app.move(700, 500)
        app.xdo("keydown", "shift", "click", "5", "sleep", "0.05", "click", "5", "sleep", "0.05", "click", "5",
                "keyup", "shift")
        time.sleep(0.5)
        s = app.state()
        r = row(s, "gpu_stream", 1)
        app.click(s["timeline"]["canvas"]["x0"] - 80, r["y"] + 5, button=3)
        app.wait(lambda s: s["timeline"]["menu"])

    feature(binary, profile, out, "timeline-pinned.png", [], pinned, size="1600x700")

    def explorer(app):
        s = app.wait(lambda s: not s["loading"] and s["explorer"]["controls"]["TP"][2] > 0)
        time.sleep(0.5)
        s = app.state()
        tp = s["explorer"]["controls"]["TP"]
        h = tp[3] - tp[1]
        app.click(tp[2] + 2 + h / 2, (tp[1] + tp[3]) / 2)
        time.sleep(0.3)
        app.move(tp[2] + 2 + h / 2 + 10, tp[3] + 2.6 * h)  # over an entry of the list (TP 3 is invalid)

    feature(binary, profile, out, "explorer-steps.png", ["--panel", "explorer"], explorer)

    def open_dialog(app):
        app.loaded()
        app.xdo("key", "ctrl+o")
        app.wait(lambda s: s["open_dialog"])

    feature(binary, profile, out, "open-dialog.png", [], open_dialog)
    feature(binary, profile, out, "timeline-hidpi.png", ["--scale", "2", "--range", "60:66"], selection, size="2200x1400")


if __name__ == "__main__":
    main()
