"""webtest.py - what the web tests share: start `llmstep web` on a free port and stop it."""
import os
import re
import subprocess
import sys
import time

SKIP = 77

failures = []
checks = [0]


def check(cond, msg):
    """Counts a check; prints and keeps the message of a failed one."""
    checks[0] += 1
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)


def report(name):
    """The last line, and the exit status: 1 when a check failed."""
    print("%s: %d checks, %d failed" % (name, checks[0], len(failures)))
    return 1 if failures else 0


def skip(msg):
    """Exit 77 (ctest's skip) with the reason, except in CI, where a missing tool fails."""
    if os.environ.get("CI"):
        print("FAIL (CI): " + msg)
        sys.exit(1)
    print("SKIP: " + msg)
    sys.exit(SKIP)


class Server:
    """`llmstep web --port 0` as a child process; .url, .pid; stop() ends it."""

    def __init__(self, binary, *args):
        # Under AddressSanitizer (make asan) freed memory is held in a 256 MiB quarantine,
        # which the memory bound would count; a small one keeps the check meaningful there.
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = ":".join(
            x for x in (env.get("ASAN_OPTIONS", ""), "quarantine_size_mb=4") if x)
        self.proc = subprocess.Popen(
            [binary, "web", "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            err = self.proc.stderr.read()
            self.proc.kill()
            if "built without GNU libmicrohttpd" in err:
                skip("llmstep was built without libmicrohttpd: " + err.strip())
            raise RuntimeError("llmstep web did not start: %r %r" % (line, err))
        self.port = int(m.group(1))
        self.url = "http://127.0.0.1:%d/" % self.port
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def rss_bytes(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                rc = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise RuntimeError("llmstep web did not stop on SIGTERM within 10 s")
            return rc
        return self.proc.returncode


def wait_until(pred, timeout_s, what):
    t0 = time.time()
    while time.time() - t0 < timeout_s:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out after %.0f s waiting for %s" % (timeout_s, what))
