#!/usr/bin/env python3
"""http_robustness.py LLMSTEP [SECONDS] - `llmstep web` under hostile clients.

Starts `llmstep web --port 0 --timeout-s 2` and, while checking that a normal question is still
answered quickly and that the server's resident memory stays bounded, sends:
  - random request bodies (random bytes, cut-off JSON, deep nesting, wrong types for every
    field, non-finite numbers), each answered 400 with a JSON message, for SECONDS (default 10);
  - bodies above the 1 MiB bound, declared (413 at once) and chunked (connection closed);
  - raw garbage instead of HTTP, and requests that name another host (403);
  - 100 slow clients that send a header a byte at a time, and idle ones, which the server
    must close after its timeout while answering others;
and finally that it binds to 127.0.0.1 only and stops cleanly on SIGTERM.
"""
import http.client
import json
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402

check = webtest.check


def request(port, method, path, body=None, headers=None, timeout=20):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


GOOD = json.dumps({"model": "llama-3.1-8b", "hws": ["h100-sxm"], "tps": [1],
                   "prompt_tokens": 1024, "output_tokens": 256})


def quick_answer(port, what, limit_s=3.0):
    """A normal question is answered 200 within limit_s."""
    t0 = time.time()
    try:
        status, data = request(port, "POST", "/api/capacity", GOOD, timeout=limit_s + 2)
    except OSError as e:
        check(False, "%s: a normal question failed: %s" % (what, e))
        return
    dt = time.time() - t0
    check(status == 200 and b"kv_capacity_tokens" in data,
          "%s: a normal question got %d %r" % (what, status, data[:200]))
    check(dt < limit_s, "%s: a normal question took %.2f s (limit %.1f s)" % (what, dt, limit_s))


FIELDS = ["model", "config_json", "engine", "calibration", "dtype", "kv_dtype", "max_model_len",
          "gpu_memory_utilization_frac", "hws", "tps", "arrival", "loads", "prompt_tokens",
          "output_tokens", "range_ratio", "num_requests", "seed", "slo_ttft_ms", "slo_tpot_ms",
          "slo_percentile", "gpu_hour_usd", "best", "hw", "tp", "phase", "batch", "tokens"]
VALUES = [None, True, False, 0, -1, 1, 3.5, 1e308, -1e308, "", "x" * 300, "../../etc/passwd",
          "/dev/zero", [], [1] * 40, [None], {"a": 1}, "NaN", 2 ** 63, "h100-sxm", "llama-3.1-8b",
          "{bad", "poisson", [4096] * 32]


def random_body(rng):
    k = rng.randrange(8)
    if k == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    if k == 1:
        s = GOOD
        return s[:rng.randrange(len(s))].encode()
    if k == 2:
        d = rng.randrange(1, 3000)
        return ("[" * d + "]" * rng.randrange(d + 1)).encode()
    if k == 3:
        return b'{"prompt_tokens": NaN, "tps": [Infinity], "hws": -Infinity}'
    obj = {}
    for _ in range(rng.randrange(1, 8)):
        obj[rng.choice(FIELDS + ["unknown", "Model", "tp s"])] = rng.choice(VALUES)
    return json.dumps(obj).encode()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    srv = webtest.Server(binary, "--timeout-s", "2")
    port = srv.port
    rng = random.Random(30)
    try:
        quick_answer(port, "start")
        rss0 = srv.rss_bytes()

        # Loopback only: the listening socket is 127.0.0.1's.
        addrs = open("/proc/net/tcp").read().split("\n")[1:]
        mine = [line.split()[1] for line in addrs
                if line.strip() and int(line.split()[1].split(":")[1], 16) == port
                and line.split()[3] == "0A"]
        check(mine == ["0100007F:%04X" % port], "listens on 127.0.0.1 only: %r" % mine)

        # Random bodies: each 400 (or 413/404), JSON with an error; the server stays up.
        t0, n = time.time(), 0
        paths = ["/api/capacity", "/api/serving", "/api/step"]
        while time.time() - t0 < seconds:
            body = random_body(rng)
            status, data = request(port, "POST", rng.choice(paths), body)
            n += 1
            ok = status in (200, 400, 413)
            try:
                j = json.loads(data)
                ok = ok and (status == 200 or isinstance(j.get("error"), str))
            except ValueError:
                ok = False
            check(ok, "random body %r: %d %r" % (body[:80], status, data[:120]))
            if not ok:
                break
        print("random bodies: %d requests in %.1f s" % (n, time.time() - t0))
        check(srv.alive(), "alive after the random bodies")
        quick_answer(port, "after random bodies")

        # Declared huge body: 413 at once, before any of it is sent.
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"POST /api/capacity HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Length: 1000000000\r\n\r\n")
        head = c.recv(200)
        check(b" 413 " in head, "a 1 GB Content-Length gets 413 at once: %r" % head[:60])
        c.close()

        # Chunked body past 1 MiB: the connection is closed, memory stays bounded.
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(b"POST /api/capacity HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
        try:
            for _ in range(24):  # 1.5 MiB
                c.sendall(chunk)
        except OSError:
            pass
        c.settimeout(5)
        try:
            closed = c.recv(100) == b""
        except socket.timeout:
            closed = False
        except OSError:
            closed = True  # reset by the server
        check(closed, "a chunked body past 1 MiB: the server closes the connection")
        c.close()

        # Garbage instead of HTTP, and another Host.
        for junk in (b"\x00\xff" * 500 + b"\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                     b"GET " + b"/a" * 20000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            try:
                c.sendall(junk)
                c.recv(200)
            except OSError:
                pass
            c.close()
        check(srv.alive(), "alive after garbage")
        status, _ = request(port, "GET", "/api/catalog", headers={"Host": "evil.example:80"})
        check(status == 403, "a request naming another host gets 403 (got %d)" % status)
        status, _ = request(port, "GET", "/../../etc/passwd")
        check(status == 404, "no file outside the page: 404 (got %d)" % status)

        # 100 slow clients (a header byte at a time) and 20 idle ones.
        slow = []
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /api/capacity HTTP/1.1\r\n")
            slow.append(s)
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
        for k in range(3):
            for s in slow:
                try:
                    s.sendall(b"X")
                except OSError:
                    pass
            quick_answer(port, "with 120 slow clients (round %d)" % k)
            time.sleep(0.5)
        # The idle ones are closed after the 2 s timeout.
        time.sleep(3.5)
        n_closed = 0
        for s in idle:
            s.settimeout(2)
            try:
                n_closed += s.recv(10) == b""
            except OSError:
                n_closed += 1
            s.close()
        check(n_closed == len(idle), "idle clients closed after the timeout: %d of %d"
              % (n_closed, len(idle)))
        for s in slow:
            s.close()
        quick_answer(port, "after the slow clients")

        rss1 = srv.rss_bytes()
        print("resident memory: %.1f MiB at start, %.1f MiB after" % (rss0 / 2**20, rss1 / 2**20))
        check(rss1 - rss0 < 64 * 2**20, "memory grew by %.1f MiB (bound 64 MiB)"
              % ((rss1 - rss0) / 2**20))
    finally:
        rc = srv.stop()
    check(rc == 0, "exits 0 on SIGTERM (got %r)" % rc)
    return webtest.report("http_robustness")


if __name__ == "__main__":
    sys.exit(main())
