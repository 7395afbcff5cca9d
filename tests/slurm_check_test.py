#!/usr/bin/env python3
"""contrib/slurm/vigil-slurm-check run the way slurmd runs a HealthCheckProgram (Slurm 22.05's
run_command: its own process group, stdout read to its end, waitpid, then SIGTERM and SIGKILL to
the whole group at once), with a stand-in `scontrol` and `vigil` named by the settings file.

- The validation that the health check of a drained idle node starts survives that kill, every
  time (it used to die with the group whenever it had not reached setsid yet: CI saw a drained
  node never validated for two minutes).
- At most one validation runs at a time, and a health check that finds one running returns at
  once.
- A validation that hangs is stopped after VIGIL_VALIDATION_TIMEOUT and lets the lock go.
- A node that is not drained runs the health suite and logs its line.

The real slurmd is in tests/cli_slurm_test.cc; this test makes the kill immediate, which is what
makes the race certain rather than rare.

Usage: slurm_check_test.py
"""
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECK = ROOT / "contrib" / "slurm" / "vigil-slurm-check"

# `scontrol show node` prints the state in $dir/state_line; `vigil` logs its suite and session.
SCONTROL = """#!/bin/sh
cat "{dir}/state_line"
"""
VIGIL = """#!/bin/sh
suite=
while [ $# -gt 0 ]; do
  if [ "$1" = --suite ]; then suite=$2; fi
  shift
done
group=$(cut -d' ' -f5 /proc/$$/stat)
session=$(cut -d' ' -f6 /proc/$$/stat)
echo "$suite $group $session" >> "{dir}/runs"
if [ "$suite" = quick ]; then sleep "$(cat "{dir}/validation_seconds")"; fi
echo OK
"""
DRAINED = "NodeName=n1 State=IDLE+DRAIN Reason=vigil: memory x [root@2026-11-30T09:00:00]\n"
UP = "NodeName=n1 State=IDLE Reason=(null)\n"


def like_slurmd(env):
    """Runs the check as slurmd's run_command does; its pid (its group's id) and its seconds."""
    start = time.monotonic()
    p = subprocess.Popen([str(CHECK)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         env=env, process_group=0)
    p.stdout.read()
    p.wait()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        time.sleep(0.01)
    return p.pid, time.monotonic() - start


def runs(d, suite):
    """The (process group, session) of each run of `suite`."""
    path = d / "runs"
    lines = path.read_text().splitlines() if path.exists() else []
    return [tuple(line.split()[1:]) for line in lines if line.split()[0] == suite]


def checks_text(d):
    path = d / "state" / "n1" / "checks.txt"
    return path.read_text() if path.exists() else ""


def wait_for(done, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.05)
    return done()


def main():
    failures = 0

    def check(ok, what):
        nonlocal failures
        if not ok:
            print(f"FAIL {what}")
            failures += 1

    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        (d / "bin").mkdir()
        for name, text in (("scontrol", SCONTROL), ("vigil", VIGIL)):
            (d / "bin" / name).write_text(text.format(dir=d))
            (d / "bin" / name).chmod(0o755)
        (d / "slurm.env").write_text(
            f"PATH={d}/bin:$PATH\nVIGIL={d}/bin/vigil\nVIGIL_STATE={d}/state\n")
        env = {"VIGIL_SLURM_ENV": str(d / "slurm.env"), "SLURMD_NODENAME": "n1"}

        def lock_free():
            lock = d / "state" / "n1" / "validate.lock"
            return subprocess.run(["flock", "-n", str(lock), "true"]).returncode == 0
        (d / "validation_seconds").write_text("0")

        # Each health check of a drained node starts a validation that outlives the kill, in a
        # session other than the health check's.
        (d / "state_line").write_text(DRAINED)
        for i in range(5):
            pgid, _ = like_slurmd(env)
            check(wait_for(lambda: len(runs(d, "quick")) == i + 1, 5),
                  f"health check {i + 1}: the validation did not run "
                  f"(runs: {runs(d, 'quick')})")
            for group, session in runs(d, "quick")[i:]:
                check(group != str(pgid) and session != str(os.getsid(0)),
                      f"health check {i + 1}: the validation ran in the health check's process "
                      f"group or session (group {group}, session {session})")
            check(wait_for(lock_free, 5), f"health check {i + 1}: the lock stayed held")
        started = checks_text(d).count("validation started")
        check(started == 5, f"checks.txt records {started} validations started, not 5")

        # A validation that is still running: the next check starts none and returns at once.
        (d / "validation_seconds").write_text("3")
        like_slurmd(env)
        check(wait_for(lambda: len(runs(d, "quick")) == 6, 5), "the long validation did not run")
        _, seconds = like_slurmd(env)
        time.sleep(0.3)
        check(len(runs(d, "quick")) <= 6, "a second validation ran beside the first")
        check(seconds < 2, f"a health check beside a validation took {seconds:.1f} s")
        check(wait_for(lock_free, 6), "the lock was still held after the validation ended")

        # A validation that hangs is stopped after VIGIL_VALIDATION_TIMEOUT, its lock let go,
        # and its exit (124) logged.
        with open(d / "slurm.env", "a") as env_file:
            env_file.write("VIGIL_VALIDATION_TIMEOUT=1s\n")
        (d / "validation_seconds").write_text("30")
        like_slurmd(env)
        check(wait_for(lambda: len(runs(d, "quick")) == 7, 5), "the hanging validation did not run")
        check(wait_for(lambda: "validation exit 124" in checks_text(d), 5),
              "the hanging validation was not stopped after 1 s")
        check(wait_for(lock_free, 2), "the lock was still held after the validation was stopped")

        # A node that is up runs the health suite, and its line is logged.
        (d / "state_line").write_text(UP)
        like_slurmd(env)
        check(len(runs(d, "health")) == 1, "the health suite did not run on a node that is up")
        last = (checks_text(d).splitlines() or [""])[-1]
        check(last.endswith("health_check exit 0: OK"), f"checks.txt ends with {last!r}")

    print("ok" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
