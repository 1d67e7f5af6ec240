#!/usr/bin/env python3
"""browser_test.py LLMSTEP SCREENSHOT_DIR - the planner page in headless Chromium (Debian's
chromium and chromium-driver, driven with Debian's python3-selenium).

Drives the page through its questions as a user would (pick GPUs, prices, TPs, loads and SLOs,
click), and checks every number the page shows against the `llmstep` CLI run with the command
the page itself shows for that view: capacity (`llmstep capacity`), the serving curves
(`llmstep sweep --kind serving`), the best layout under the SLOs (`... --best`) and the step's
operators (`llmstep predict`). Numbers must be equal to the last bit (the page keeps each exact
value in data-value). Then a bad pasted config.json must show the loader's message, the one the
CLI prints for that file. Screenshots of each view go to SCREENSHOT_DIR.
"""
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webtest  # noqa: E402

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    webtest.skip("python3-selenium is not installed (Debian: apt-get install python3-selenium)")

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"

check = webtest.check


def run_cli(binary, cmd, cwd=None):
    """Runs a command line the page shows (it starts with `llmstep`)."""
    argv = shlex.split(cmd)
    assert argv[0] == "llmstep", cmd
    p = subprocess.run([binary] + argv[1:], capture_output=True, text=True, cwd=cwd)
    return p


def cli_json(binary, cmd):
    p = run_cli(binary, cmd)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (cmd, p.returncode, p.stderr))
    return json.loads(p.stdout)


def same(page_value, cli_value, what):
    """page_value: the data-value text (JS's shortest round-trip form); cli_value: from JSON."""
    if cli_value is None:
        check(page_value == "" or page_value == "null", "%s: page %r, CLI null" % (what, page_value))
        return
    try:
        pv = float(page_value)
    except ValueError:
        check(False, "%s: page %r is not a number (CLI %r)" % (what, page_value, cli_value))
        return
    check(pv == float(cli_value), "%s: page %r, CLI %r" % (what, pv, cli_value))


def data_dir_of(binary):
    """The data folder the server reads (the first line of `llmstep --help`'s data note)."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Data: models and hwprofiles are read from "):
            return line.split(" read from ", 1)[1].split(" (", 1)[0]
    raise RuntimeError("llmstep --help names no data folder")


def same_latency(c, ttft, tpot, what):
    """The page's TTFT and TPOT p50 and p90 against the CLI's distributions."""
    for k in ("p50", "p90"):
        same(c["ttft_s." + k], ttft[k], what + ": TTFT " + k)
        same(c["tpot_s." + k], tpot[k], what + ": TPOT " + k)


def cells(row):
    return {td.get_attribute("data-key"): td.get_attribute("data-value")
            for td in row.find_elements(By.CSS_SELECTOR, "td[data-key]")}


def rows_of(driver, table_id):
    return driver.find_elements(By.CSS_SELECTOR, "#%s tr[data-hw]" % table_id)


def click_and_wait(driver, button, view):
    driver.execute_script("document.body.dataset.done = ''")
    driver.find_element(By.ID, button).click()
    WebDriverWait(driver, 120).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-done") == view
        or d.find_element(By.ID, "error").is_displayed())
    err = driver.find_element(By.ID, "error")
    if err.is_displayed():
        raise RuntimeError("%s: the page shows an error: %s" % (view, err.text))


def set_input(driver, elem_id, value):
    e = driver.find_element(By.ID, elem_id)
    e.clear()
    e.send_keys(str(value))


def set_checked(driver, elem, on):
    if elem.is_selected() != on:
        elem.click()


def screenshot(driver, out_dir, name, section):
    driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()", section)
    path = os.path.join(out_dir, name + ".png")
    driver.save_screenshot(path)
    print("screenshot: " + path)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, out_dir = os.path.abspath(sys.argv[1]), sys.argv[2]
    for tool in (CHROMIUM, DRIVER):
        if not os.access(tool, os.X_OK):
            webtest.skip("%s is missing (Debian: apt-get install chromium chromium-driver)" % tool)
    os.makedirs(out_dir, exist_ok=True)
    srv = webtest.Server(binary)
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="llmstep-chromium-")
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1400,1800",
              "--user-data-dir=" + profile):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        driver.get(srv.url)
        WebDriverWait(driver, 30).until(
            lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "idle")
        check("llmstep" in driver.find_element(By.ID, "version").text, "the page shows the version")

        # The inputs: Llama-3.1-8B on H100 SXM (2.5 USD/h) and A100 80GB (1.6 USD/h), TP 1 and 2,
        # each GPU's shipped calibration, 1024/256 tokens, closed loop of 1, 8, 32 and 64 clients,
        # SLOs TTFT 500 ms and TPOT 30 ms at p90.
        Select(driver.find_element(By.ID, "model")).select_by_value("llama-3.1-8b")
        set_checked(driver, driver.find_element(By.ID, "hw-h100-sxm"), True)
        set_checked(driver, driver.find_element(By.ID, "hw-a100-sxm-80gb"), True)
        set_input(driver, "price-h100-sxm", "2.5")
        set_input(driver, "price-a100-sxm-80gb", "1.6")
        for tp in driver.find_elements(By.CSS_SELECTOR, ".tp"):
            set_checked(driver, tp, tp.get_attribute("value") in ("1", "2"))
        Select(driver.find_element(By.ID, "calibration")).select_by_value("shipped")
        # An fp8 KV cache and a 32k context limit: options every command line must carry.
        Select(driver.find_element(By.ID, "kv-dtype")).select_by_value("fp8")
        set_input(driver, "max-model-len", "32768")
        set_input(driver, "loads", "1,8,32,64")
        set_input(driver, "prompt", "1024")
        set_input(driver, "output", "256")
        set_input(driver, "slo-ttft", "500")
        set_input(driver, "slo-tpot", "30")

        # 1. Capacity.
        click_and_wait(driver, "btn-capacity", "capacity")
        cmds = driver.find_element(By.ID, "cli-capacity").text.strip().split("\n")
        check(all("--kv-dtype fp8 --max-model-len 32768" in c for c in cmds),
              "capacity: the commands carry the KV dtype and max_model_len")
        rows = rows_of(driver, "out-capacity")
        check(len(rows) == 4 and len(cmds) == 4,
              "capacity: 4 rows and 4 commands (2 GPUs x 2 TPs), got %d, %d" % (len(rows), len(cmds)))
        for row, cmd in zip(rows, cmds):
            c = cells(row)
            j = cli_json(binary, cmd)
            f = j["per_tp"]
            what = "capacity %s TP %s" % (row.get_attribute("data-hw"), row.get_attribute("data-tp"))
            check(j["hardware"] == row.get_attribute("data-hw"), what + ": GPU")
            check(c.get("kv_dtype") == j["kv_dtype"] == "fp8", what + ": KV dtype fp8")
            check(j["max_model_len"] == 32768, what + ": max_model_len")
            for key in ("capacity_bytes_per_gpu", "usable_bytes_per_gpu", "weights_bytes_per_gpu",
                        "activation_bytes_per_gpu", "reserve_bytes_per_gpu",
                        "kv_budget_bytes_per_gpu", "kv_capacity_tokens", "max_seqs_at_context"):
                same(c.get(key), f[key], what + ": " + key)
        screenshot(driver, out_dir, "1-capacity", "sec-capacity")

        # 2. Serving curves.
        click_and_wait(driver, "btn-serving", "serving")
        cmd = driver.find_element(By.ID, "cli-serving").text.strip()
        j = cli_json(binary, cmd)
        cli_rows = {(r["hardware"], r["tp"], r["concurrency"]): r for r in j["rows"]}
        rows = rows_of(driver, "out-serving")
        check(len(rows) == len(cli_rows) == 16,
              "serving: 16 rows (2 GPUs x 2 TPs x 4 loads): page %d, CLI %d"
              % (len(rows), len(cli_rows)))
        for row in rows:
            c = cells(row)
            key = (row.get_attribute("data-hw"), int(c["tp"]), int(c["concurrency"]))
            r = cli_rows.get(key)
            check(r is not None, "serving: CLI has no row %r" % (key,))
            if r is None:
                continue
            what = "serving %s TP %d at %d clients" % key
            check(c["status"] == r["status"], what + ": status")
            if r["status"] != "ok":
                continue
            same_latency(c, r["ttft_s"], r["tpot_s"], what)
            same(c["requests_per_s"], r["requests_per_s"], what + ": requests/s")
            same(c["output_tokens_per_s_per_gpu"], r["output_tokens_per_s_per_gpu"],
                 what + ": tokens/s/GPU")
            same(c["cost_per_mtok_usd"], r["cost_per_mtok_usd"], what + ": cost")
            check(c["meets_slo"] == ("yes" if r["meets_slo"] else "no"), what + ": meets_slo")
        plots = driver.find_elements(By.CSS_SELECTOR, "#plot-ttft canvas, #plot-tpot canvas")
        check(len(plots) == 2, "serving: two plots drawn (got %d canvases)" % len(plots))
        screenshot(driver, out_dir, "2-serving", "sec-serving")

        # 3. The best layout per GPU under the SLOs, and the GPUs a demand of 100 requests/s
        # takes: replicas = ceil(100 / the layout's requests/s), GPUs = replicas x its GPUs.
        set_input(driver, "demand", "100")
        click_and_wait(driver, "btn-best", "best")
        cmd = driver.find_element(By.ID, "cli-best").text.strip()
        check("--best" in cmd and "--seeds 20" in cmd, "best: the command asks --best over 20 seeds")
        j = cli_json(binary, cmd)
        rows = rows_of(driver, "out-best")
        cli_best = {r["hardware"]: r for r in j["rows"]}
        check(len(rows) == 2, "best: one row per GPU, got %d" % len(rows))
        for row in rows:
            c = cells(row)
            hw = row.get_attribute("data-hw")
            r = cli_best.get(hw)
            if c.get("status") == "none_meets_slo":
                check(r is None, "best %s: page says none meets the SLOs, CLI has a row" % hw)
                continue
            check(r is not None, "best %s: the CLI keeps no row" % hw)
            if r is None:
                continue
            what = "best %s" % hw
            same(c["tp"], r["tp"], what + ": TP")
            same(c["concurrency"], r["concurrency"], what + ": clients")
            same(c["gpus"], r["tp"], what + ": GPUs")
            same_latency(c, r["ttft_s"], r["tpot_s"], what)
            same(c["cost_per_mtok_usd"], r["cost_per_mtok_usd"], what + ": cost")
            same(c["output_tokens_per_s_per_gpu"], r["output_tokens_per_s_per_gpu"],
                 what + ": tokens/s/GPU")
            replicas = math.ceil(100.0 / r["requests_per_s"])
            same(c["replicas_for_demand"], replicas, what + ": replicas for 100 requests/s")
            same(c["gpus_for_demand"], replicas * r["tp"], what + ": GPUs for 100 requests/s")
        screenshot(driver, out_dir, "3-best", "sec-best")
        set_input(driver, "demand", "")

        # 4. A step's operators on the roofline.
        Select(driver.find_element(By.ID, "step-hw")).select_by_value("h100-sxm")
        Select(driver.find_element(By.ID, "step-tp")).select_by_value("2")
        set_input(driver, "step-batch", "64")
        set_input(driver, "step-tokens", "2048")
        click_and_wait(driver, "btn-step", "step")
        cmd = driver.find_element(By.ID, "cli-step").text.strip()
        j = cli_json(binary, cmd)
        cli_ops = {o["name"]: o for o in j["ops"]}
        rows = driver.find_elements(By.CSS_SELECTOR, "#out-step tr[data-op]")
        n_ops = 0
        for row in rows:
            c = cells(row)
            name = row.get_attribute("data-op")
            if name == "step":
                same(c["step_time_s"], j["step_time_s"], "step time")
                continue
            n_ops += 1
            o = cli_ops.get(name)
            check(o is not None, "step: the CLI has no operator %s" % name)
            if o:
                same(c["time_s"], o["time_s"], "step %s: time" % name)
                same(c["flops_per_gpu"], o["flops_per_gpu"], "step %s: FLOPs" % name)
                same(c["hbm_bytes_per_gpu"], o["hbm_bytes_per_gpu"], "step %s: bytes" % name)
        check(n_ops == len(cli_ops), "step: %d operators on the page, %d in the CLI"
              % (n_ops, len(cli_ops)))
        check(len(driver.find_elements(By.CSS_SELECTOR, "#plot-roofline canvas")) == 1,
              "step: the roofline is drawn")
        screenshot(driver, out_dir, "4-roofline", "sec-step")

        # A library error in a view: the CLI's message for the command shown.
        set_input(driver, "step-batch", "5000")
        driver.find_element(By.ID, "btn-step").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        shown = driver.find_element(By.ID, "error").text.strip()
        p = run_cli(binary, "llmstep predict --model llama-3.1-8b --hw h100-sxm --tp 2 "
                    "--decode 5000x2048 --calibration %s/calibrations" % data_dir_of(binary))
        check(p.returncode != 0 and p.stderr.strip().endswith(": " + shown),
              "step error: page %r, CLI %r" % (shown, p.stderr.strip()))
        set_input(driver, "step-batch", "64")

        # 5. A trace replayed by each layout: `llmstep serve --trace trace.jsonl` per row.
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "trace.jsonl")
            with open(trace, "w") as f:
                for i in range(60):  # 60 requests, 8 a second, lengths cycling
                    f.write(json.dumps({"arrival_s": i * 0.125,
                                        "prompt_tokens": 256 + 97 * (i % 11),
                                        "output_tokens": 32 + 13 * (i % 7)}) + "\n")
            driver.find_element(By.ID, "trace-file").send_keys(trace)
            WebDriverWait(driver, 10).until(
                lambda dr: dr.find_element(By.ID, "trace-info").text != "")
            click_and_wait(driver, "btn-serving", "serving")
            cmds = driver.find_element(By.ID, "cli-serving").text.strip().split("\n")
            rows = rows_of(driver, "out-serving")
            check(len(rows) == 4 and len(cmds) == 4,
                  "trace: 4 rows and commands (2 GPUs x 2 TPs), got %d, %d" % (len(rows), len(cmds)))
            for row, cmd in zip(rows, cmds):
                c = cells(row)
                p = run_cli(binary, cmd, cwd=d)
                check(p.returncode == 0, "trace: %s: exit %d %s" % (cmd, p.returncode, p.stderr))
                if p.returncode != 0:
                    continue
                j = json.loads(p.stdout)
                what = "trace %s TP %s" % (row.get_attribute("data-hw"), c["tp"])
                check(j["hardware"] == row.get_attribute("data-hw") and j["tp"] == int(c["tp"]),
                      what + ": the command's layout")
                same_latency(c, j["ttft_s"], j["tpot_s"], what)
                same(c["requests_per_s"], j["request_throughput_per_s"], what + ": requests/s")
                same(c["output_tokens_per_s_per_gpu"], j["output_tokens_per_s"] / j["tp"],
                     what + ": tokens/s/GPU")
                check(j["n_requests"] == 60, what + ": 60 requests replayed")
            screenshot(driver, out_dir, "5-trace", "sec-serving")
            driver.find_element(By.ID, "trace-clear").click()

        # 6. A bad config.json: the loader's message, as the CLI prints it for that file.
        bad = '{\n  "model_type": "llama",\n  "hidden_size": 4096\n}\n'
        driver.find_element(By.CSS_SELECTOR, "#paste summary").click()
        driver.execute_script("document.getElementById('config').value = arguments[0]", bad)
        driver.find_element(By.ID, "btn-capacity").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        shown = driver.find_element(By.ID, "error").text.strip()
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "config.json"), "w") as f:
                f.write(bad)
            p = run_cli(binary, "llmstep capacity --model config.json --hw h100-sxm --tp 1", cwd=d)
        cli_msg = p.stderr.strip()
        check(p.returncode != 0, "the CLI refuses the bad config")
        check(cli_msg == "llmstep: " + shown,
              "bad config: page %r, CLI %r" % (shown, cli_msg))
        screenshot(driver, out_dir, "6-bad-config", "error")
    finally:
        driver.quit()
        rc = srv.stop()
    check(rc == 0, "llmstep web exits 0 on SIGTERM (got %r)" % rc)
    return webtest.report("browser_test")


if __name__ == "__main__":
    sys.exit(main())
