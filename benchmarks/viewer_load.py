"""How long a 300-turn episode's viewer page takes to load in Chromium, against a plain page of the same size.

The episode is made here: the built-in harness's Code-v0 prompt, then 300 `bash` calls, each answered by a
40-line tool result (every 25th a 20 kB one, to be folded), with token ids, logprobs and prompt tokens recorded
as `--policy local` records them, so the page carries its token view too. The peer is a page of the same byte
size holding only one `<pre>` of text: what any page that large costs the browser to fetch and parse. Both load
from disk (`file://`), alternately, each going first in turn; the time is the navigation's `loadEventEnd`.
Opening the last turn's full request and the episode's one token chain (drawn by the page's script) are timed
too.

    python benchmarks/viewer_load.py [--quick]
"""

from __future__ import annotations

import html
import json
import random
import tempfile
import time
from pathlib import Path

from timing import options, rotated, summary, table, write

from polar.envs.web.browser import CHROMIUM, CHROMIUM_ARGS
from polar.evaluation.viewer import episode_page
from polar.leaderboard.site import SUBMISSIONS
from polar.trace import Trace, Turn, read_jsonl
from polar.types import ModelReply, ModelRequest, ToolCall

TURNS = 300


def long_episode(turns: int = TURNS) -> Trace:
    """A `turns`-call episode built on a real Code-v0 trace's first request."""
    rng = random.Random(0)
    base = next(read_jsonl(SUBMISSIONS / "oracle-builtin" / "traces.jsonl"))
    first = base.turns[0].request
    messages = list(first.messages)
    prompt = [rng.randrange(49152) for _ in range(900)]
    made = []
    for i in range(turns):
        ids = [rng.randrange(49152) for _ in range(24)]
        reply = ModelReply(
            tool_calls=[ToolCall(id=f"call_{i}", name="bash",
                                 arguments=json.dumps({"command": f"sed -n '{i},{i + 40}p' src/module_{i % 17}.py"}))],
            finish_reason="tool_calls", token_ids=ids, logprobs=[-rng.expovariate(2.0) for _ in ids],
            prompt_token_ids=list(prompt), model="SmolLM2-135M-Instruct")
        made.append(Turn(index=i, request=ModelRequest(messages=list(messages), tools=first.tools), reply=reply,
                         policy_latency_s=rng.uniform(0.2, 2.0), env_latency_s=rng.uniform(0.005, 0.05)))
        lines = 500 if i % 25 == 24 else 40
        result = "\n".join(f"{n:>5}  value_{i}_{n} = compute(value_{i}_{n - 1}, {rng.random():.6f})"
                           for n in range(lines))
        messages += [reply.to_openai_message(), {"role": "tool", "tool_call_id": f"call_{i}", "content": result}]
        prompt = prompt + ids + [rng.randrange(49152) for _ in range(40)]
    return base.model_copy(update={"turns": made, "episode_id": "long-episode"})


def plain_page(text: str, size: int) -> str:
    """A page of exactly `size` bytes: one `<pre>` of (escaped) text."""
    head, tail = "<!doctype html><html><head><meta charset=utf-8><title>plain</title></head><body><pre>", \
        "</pre></body></html>\n"
    body = html.escape(text)
    while len((head + body + tail).encode()) < size:
        body += body
    budget = size - len((head + tail).encode())
    body = body.encode()[:budget].decode(errors="ignore").rsplit("&", 1)[0]  # no entity cut in half
    return head + body + " " * (budget - len(body.encode())) + tail


def main() -> None:
    args = options(__doc__.splitlines()[0])
    rounds = 3 if args.quick else 15
    from playwright.sync_api import sync_playwright

    trace = long_episode()
    started = time.perf_counter()
    viewer = episode_page(trace)
    built_s = time.perf_counter() - started
    size = len(viewer.encode())
    loads: dict[str, list[int]] = {"viewer page": [], "plain page, same size": []}
    opens: dict[str, list[int]] = {"open the last turn's full request": [], "open the token chain": []}
    with tempfile.TemporaryDirectory(prefix="viewer-load-") as folder, sync_playwright() as p:
        pages = {"viewer page": Path(folder) / "episode.html", "plain page, same size": Path(folder) / "plain.html"}
        pages["viewer page"].write_text(viewer, encoding="utf-8")
        pages["plain page, same size"].write_text(plain_page(trace.to_json(), size), encoding="utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        tab = browser.new_page(viewport={"width": 1300, "height": 900})
        for i in range(rounds):
            for name in rotated(list(pages), i):
                tab.goto(pages[name].as_uri(), wait_until="load")
                ms = tab.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
                loads[name].append(int(ms * 1e6))
            tab.goto(pages["viewer page"].as_uri(), wait_until="load")  # a fresh page: nothing opened yet
            for name, selector in (("open the last turn's full request", "details.full"),
                                   ("open the token chain", "details.chain")):
                ms = tab.evaluate("""async (selector) => {
                    const all = document.querySelectorAll(selector), details = all[all.length - 1];
                    const start = performance.now();
                    const opened = new Promise((done) => details.addEventListener("toggle", done, {once: true}));
                    details.open = true;
                    await opened;
                    document.body.offsetHeight;  // the layout of what the script added
                    return performance.now() - start;
                }""", selector)
                opens[name].append(int(ms * 1e6))
        browser.close()
    figures = {name: summary(samples, "ms") for name, samples in {**loads, **opens}.items()}
    ratio = figures["viewer page"]["median_ms"] / figures["plain page, same size"]["median_ms"]
    rows = [[name, f["median_ms"], f["p90_ms"], f["n"]] for name, f in figures.items()]
    print(f"a {TURNS}-turn episode: page {size / 1e6:.2f} MB, built in {built_s:.2f} s "
          f"({len(trace.to_json()) / 1e6:.1f} MB of trace)")
    print(table(["load in Chromium", "median ms", "p90 ms", "n"], rows))
    print(f"viewer page / plain page of the same size: {ratio:.2f}x")
    path = write("viewer_load", args.out, {"turns": TURNS, "page_bytes": size, "build_s": round(built_s, 3),
                                           "trace_bytes": len(trace.to_json()), "results": figures,
                                           "ratio_viewer_to_plain": round(ratio, 2)})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
