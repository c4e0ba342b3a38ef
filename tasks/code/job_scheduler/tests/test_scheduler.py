import random

from scheduler import critical_path, makespan, simulate


def J(name, duration, priority=0, deps=()):
    return {"name": name, "duration": duration, "priority": priority, "deps": list(deps)}


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_single_worker_priority_then_name():
    jobs = [J("b", 2), J("a", 3), J("c", 1, priority=5)]
    assert simulate(jobs, 1) == {"c": (0, 0, 1), "a": (0, 1, 4), "b": (0, 4, 6)}
    assert makespan(jobs, 1) == 6


def test_two_workers_and_dependencies():
    jobs = [
        J("build", 4),
        J("lint", 1),
        J("test", 3, deps=["build"]),
        J("docs", 2, priority=1),
        J("ship", 1, deps=["test", "docs", "lint"]),
    ]
    assert simulate(jobs, 2) == {
        "docs": (0, 0, 2),
        "build": (1, 0, 4),
        "lint": (0, 2, 3),
        "test": (0, 4, 7),
        "ship": (0, 7, 8),
    }
    assert makespan(jobs, 2) == 8


def test_dependency_released_at_same_time_and_lowest_worker():
    jobs = [J("a", 2), J("b", 2), J("c", 1, deps=["a"]), J("d", 5, priority=-1)]
    assert simulate(jobs, 3) == {
        "a": (0, 0, 2),
        "b": (1, 0, 2),
        "d": (2, 0, 5),
        "c": (0, 2, 3),
    }


def test_defaults_and_empty():
    assert simulate([], 3) == {}
    assert makespan([], 1) == 0
    assert critical_path([]) == (0, [])
    assert simulate([{"name": "x", "duration": 3}], 2) == {"x": (0, 0, 3)}


def test_validation_errors():
    assert _raises_value_error(simulate, [J("a", 1)], 0)
    assert _raises_value_error(simulate, [J("a", 1), J("a", 2)], 1)
    assert _raises_value_error(simulate, [J("a", 0)], 1)
    assert _raises_value_error(simulate, [J("a", True)], 1)
    assert _raises_value_error(simulate, [J("a", 1, deps=["zz"])], 1)
    assert _raises_value_error(simulate, [J("a", 1, deps=["b"]), J("b", 1, deps=["a"])], 1)
    assert _raises_value_error(makespan, [J("a", 1, deps=["a"])], 1)
    assert _raises_value_error(critical_path, [J("a", 1, deps=["a"])])


def test_critical_path():
    jobs = [
        J("build", 4),
        J("lint", 1),
        J("test", 3, deps=["build"]),
        J("docs", 2),
        J("ship", 1, deps=["test", "docs", "lint"]),
    ]
    assert critical_path(jobs) == (8, ["build", "test", "ship"])


def test_critical_path_ties():
    jobs = [J("z", 2), J("b", 2), J("a", 1, deps=["b"]), J("c", 1, deps=["b"]), J("y", 1, deps=["z"])]
    assert critical_path(jobs) == (3, ["b", "a"])
    jobs = [J("m", 2), J("k", 1), J("k2", 1, deps=["k"])]
    assert critical_path(jobs) == (2, ["k", "k2"])
    jobs = [J("a", 1), J("c", 2, deps=["a"]), J("b", 2, deps=["a"]), J("x", 2, deps=["c"])]
    assert critical_path(jobs) == (5, ["a", "c", "x"])
    jobs = [J("a", 1), J("c", 2, deps=["a"]), J("b", 2, deps=["a"])]
    assert critical_path(jobs) == (3, ["a", "b"])


def _random_jobs(rng, n):
    jobs = []
    for i in range(n):
        deps = rng.sample([f"j{k}" for k in range(i)], min(i, rng.randint(0, 3)))
        jobs.append(J(f"j{i}", rng.randint(1, 9), rng.randint(-2, 2), deps))
    rng.shuffle(jobs)
    return jobs


def test_random_invariants():
    rng = random.Random(31)
    for _ in range(40):
        jobs = _random_jobs(rng, rng.randint(1, 30))
        workers = rng.randint(1, 4)
        result = simulate(jobs, workers)
        assert set(result) == {j["name"] for j in jobs}
        for job in jobs:
            worker, start, end = result[job["name"]]
            assert 0 <= worker < workers and end == start + job["duration"]
            assert all(result[d][2] <= start for d in job["deps"])
        spans = sorted((w, s, e) for w, s, e in result.values())
        for (w1, _, e1), (w2, s2, _) in zip(spans, spans[1:], strict=False):
            assert w1 != w2 or e1 <= s2
        assert makespan(jobs, len(jobs)) == critical_path(jobs)[0]


def test_large_input_is_fast():
    rng = random.Random(4)
    jobs = _random_jobs(rng, 3000)
    result = simulate(jobs, 8)
    assert len(result) == 3000
    length, chain = critical_path(jobs)
    durations = {j["name"]: j["duration"] for j in jobs}
    assert length == sum(durations[n] for n in chain)
