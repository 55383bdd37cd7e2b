"""``reverie serve`` under load on loopback (SPEC 11, 15): searches and writes through HTTP.

In one run, on a home whose agent has a 1,000-entry memory (``--entries``):

1. **Search through the Python API** (``Reverie.memory_search``), one call after another, in
   this process: the ceiling, since every HTTP search ends in that call.
2. **Search through the HTTP API**: ``reverie serve`` in a second process, and a load generator
   in a third (``wrk``, from Debian's package, when it is installed; otherwise an asyncio
   generator built on httpx), at 1, 8 and 64 connections: requests per second, p50 and p99.
   Every request carries a bearer token, so authentication is part of each one.
3. **Writes**: one ``add`` after another, through ``POST /api/agents/ada/memory`` (keep-alive
   connection) and through ``Reverie.memory_apply`` in this process, interleaved in blocks so
   that drift hits both alike.
4. **Memory**: the server's resident set size idle after start, and after the load.

Run::

    python bench/serve_bench.py [--entries 1000] [--seconds 8] [--writes 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from reverie import Reverie

QUERY = "billing deploy"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build(home: Path, entries: int) -> str:
    gen = _common.TextGen(seed=3)
    with Reverie(home, create=True) as rv:
        rv.add_member("olga", "owner")
        rv.create_agent("ada", creator="olga")
        items = gen.entries(entries)
        ops: list[dict[str, Any]] = [
            {"action": "set_body", "text": _common.index_text(items[:400])}
        ]
        for i in range(400, len(items), 500):
            ops.append(
                {
                    "action": "write_topic",
                    "topic": f"topic-{i}",
                    "content": _common.topic_text(f"Topic {i}", items[i : i + 500], gen.rng),
                }
            )
        rv.memory_apply("ada", {"operations": ops})
        token, _ = rv.create_token("olga", "bench")
    return token


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(home: Path, port: int, workers: int = 1) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reverie.cli",
            "serve",
            "--home",
            str(home),
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_common.ROOT / "src")},
    )
    import httpx2

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx2.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the server did not start")


def python_search(home: Path, seconds: float) -> dict[str, float]:
    samples: list[int] = []
    with Reverie(home) as rv:
        rv.memory_search("ada", QUERY)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t = time.perf_counter_ns()
            rv.memory_search("ada", QUERY)
            samples.append(time.perf_counter_ns() - t)
    s = _common.Stats.of_ns(samples)
    return {"rps": s.per_second, "p50": s.p50, "p99": s.p99}


def wrk(url: str, token: str, connections: int, seconds: float) -> dict[str, float]:
    threads = min(2, connections)
    out = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds:g}s",
            "--latency",
            "-H",
            f"Authorization: Bearer {token}",
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"wrk saw errors:\n{out}")
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        "p50": _ms(re.search(r"50%\s+([\d.]+\w+)", out).group(1)),  # type: ignore[union-attr]
        "p99": _ms(re.search(r"99%\s+([\d.]+\w+)", out).group(1)),  # type: ignore[union-attr]
    }


def _ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def python_load(url: str, token: str, connections: int, seconds: float) -> dict[str, float]:
    """The fallback load generator: ``connections`` asyncio workers in a child process."""
    code = f"""
import asyncio, json, time, httpx2
async def main():
    lat = []
    async with httpx2.AsyncClient(headers={{"Authorization": "Bearer {token}"}},
                                  limits=httpx2.Limits(max_connections={connections})) as c:
        end = time.monotonic() + {seconds}
        async def worker():
            while time.monotonic() < end:
                t = time.perf_counter()
                r = await c.get("{url}")
                assert r.status_code == 200, r.text
                lat.append(time.perf_counter() - t)
        await asyncio.gather(*(worker() for _ in range({connections})))
    lat.sort()
    print(json.dumps({{"rps": len(lat) / {seconds}, "p50": lat[len(lat)//2]*1000,
                      "p99": lat[int(len(lat)*0.99)]*1000}}))
asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def writes(home: Path, base: str, token: str, count: int) -> dict[str, _common.Stats]:
    import httpx2

    api: list[int] = []
    py: list[int] = []
    with (
        Reverie(home) as rv,
        httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c,
    ):
        for block in range(0, count, 10):  # interleaved blocks of ten
            for i in range(block, min(block + 10, count)):
                t = time.perf_counter_ns()
                r = c.post("/api/agents/ada/memory", json={"action": "add", "text": f"api {i}"})
                api.append(time.perf_counter_ns() - t)
                assert r.status_code == 200, r.text
            for i in range(block, min(block + 10, count)):
                t = time.perf_counter_ns()
                rv.memory_apply("ada", {"action": "add", "text": f"python {i}"})
                py.append(time.perf_counter_ns() - t)
    return {"api": _common.Stats.of_ns(api), "python": _common.Stats.of_ns(py)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2, help="the second arm's processes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="reverie-serve-bench-"))
    home = tmp / "home"
    token = build(home, args.entries)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    url = f"{base}/api/agents/ada/memory/search?q={QUERY.replace(' ', '+')}"
    generator = "wrk" if shutil.which("wrk") else "python (httpx, asyncio)"
    results: dict[str, Any] = {"machine": _common.machine(tmp), "generator": generator}
    load = wrk if generator == "wrk" else python_load
    try:
        _common.progress("search through the Python API")
        results["python"] = python_search(home, args.seconds)
        results["http"] = {}
        for workers in (1, args.workers):
            proc = start_server(home, port, workers)
            try:
                time.sleep(1.0)
                if workers == 1:
                    results["rss_idle_mb"] = rss_mb(proc.pid)
                for connections in (1, 8, 64):
                    _common.progress(
                        f"search through HTTP, {workers} process(es), {connections} connections "
                        f"({generator})"
                    )
                    results["http"][(workers, connections)] = load(
                        url, token, connections, args.seconds
                    )
                if workers == 1:
                    results["rss_loaded_mb"] = rss_mb(proc.pid)
                    _common.progress(f"{args.writes} writes through each path")
                    results["writes"] = writes(home, base, token, args.writes)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _report(results, args.json)
    return 0


def _report(r: dict[str, Any], as_json: bool) -> None:
    ceiling = r["python"]
    rows = [
        [
            "Python API (ceiling)",
            "1 caller",
            f"{ceiling['rps']:,.0f}",
            _common.ms(ceiling["p50"]),
            _common.ms(ceiling["p99"]),
            "1.00x",
        ]
    ]
    for (workers, connections), h in r["http"].items():
        rows.append(
            [
                f"HTTP, {workers} process{'es' if workers > 1 else ''}",
                f"{connections} connections",
                f"{h['rps']:,.0f}",
                _common.ms(h["p50"]),
                _common.ms(h["p99"]),
                _common.fmt_ratio(h["rps"], ceiling["rps"]),
            ]
        )
    search = _common.markdown_table(
        ["search", "load", "requests/s", "p50 ms", "p99 ms", "vs Python API"], rows
    )
    w = r["writes"]
    write = _common.markdown_table(
        ["writes", "p50 ms", "p95 ms", "writes/s", "vs Python API"],
        [
            [
                "Python API",
                _common.ms(w["python"].p50),
                _common.ms(w["python"].p95),
                f"{w['python'].per_second:,.0f}",
                "1.00x",
            ],
            [
                "HTTP API",
                _common.ms(w["api"].p50),
                _common.ms(w["api"].p95),
                f"{w['api'].per_second:,.0f}",
                _common.fmt_ratio(w["api"].p50, w["python"].p50),
            ],
        ],
    )
    payload = {
        **{k: v for k, v in r.items() if k not in ("writes", "http")},
        "http": {f"{w} processes, {c} connections": v for (w, c), v in r["http"].items()},
        "writes": {k: v.to_dict() for k, v in w.items()},
    }
    markdown = (
        f"{_common.machine_markdown(r['machine'])}\n\nLoad generator: {r['generator']}.\n\n"
        f"{search}\n\n{write}\n\n"
        f"Server resident memory: {r['rss_idle_mb']:.0f} MB idle after start, "
        f"{r['rss_loaded_mb']:.0f} MB after the search load.\n"
    )
    _common.emit(as_json, payload, markdown)


if __name__ == "__main__":
    sys.exit(main())
