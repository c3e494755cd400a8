#!/usr/bin/env python3
"""Times how long `meshscope view PROFILE` takes to draw the whole job (the Overview, from the profile's
summaries) and to have the events in, from the view's own state file (MESHSCOPE_STATE_FILE, written every
frame), under xvfb-run. Usage: first_frame.py MESHSCOPE PROFILE [VIEW FLAGS...]. Prints both times, with lazy
ranks the time the Timeline shows every rank with the shown ranks' events loaded, and the process's peak RSS
(GNU time). docs/GUI.md and docs/PERFORMANCE.md quote its output."""
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    meshscope, profile, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    work = tempfile.mkdtemp(prefix="meshscope-first-frame-")
    state = os.path.join(work, "state.json")
    env = dict(os.environ, MESHSCOPE_STATE_FILE=state)
    start = time.time()
    proc = subprocess.Popen(
        ["/usr/bin/time", "-f", "peak %M KB", "xvfb-run", "-a", "-s", "-screen 0 1600x900x24", meshscope, "view",
         profile, "--screenshot", os.path.join(work, "full.png"), "--size", "1600x900"] + extra,
        env=env, stderr=subprocess.PIPE)
    first = events = timeline = None
    while proc.poll() is None:
        try:
            with open(state) as f:
                s = json.load(f)
        except (OSError, ValueError):
            s = {}
        if first is None and s.get("overview", {}).get("rows", 0) > 0:
            first = time.time() - start
            print("whole job drawn (Overview) after %.2f s, events loaded: %s" % (first, s.get("events")))
        if events is None and s.get("events"):
            events = time.time() - start
            lazy = s.get("lazy")
            print("events in after %.2f s%s" % (events, " (lazy ranks: the job's description and a sample)" if lazy else ""))
        lazy = s.get("lazy")
        if lazy and timeline is None and s.get("panel") == "Timeline" and lazy.get("loaded_ranks", 0) > 0 \
                and lazy.get("pending", 1) == 0:
            timeline = time.time() - start
            print("timeline with every rank's header and the shown ranks' events (%d ranks, %.0f MB) after %.2f s"
                  % (lazy["loaded_ranks"], lazy["bytes"] / 1e6, timeline))
        time.sleep(0.05)
    print("exit after %.2f s; %s" % (time.time() - start, proc.stderr.read().decode().strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
