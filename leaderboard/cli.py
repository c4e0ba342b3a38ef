"""`polar leaderboard submit | validate | build`; `polar.cli` registers these through `add_parser`."""

from __future__ import annotations

import argparse
from pathlib import Path

from polar.errors import PolarError
from polar.leaderboard.submission import SubmissionError


def cmd_submit(args: argparse.Namespace) -> int:
    from polar.leaderboard.site import LOCAL_SUBMISSIONS
    from polar.leaderboard.submit import pack

    settings = {}
    for item in args.setting or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise PolarError(f"--setting {item!r}: expected KEY=VALUE")
        settings[key] = _scalar(value)
    run_dir = Path(args.run_dir)
    out = Path(args.out or LOCAL_SUBMISSIONS / run_dir.resolve().name)
    manifest = pack(run_dir, out, args.name, settings)
    print(f"submission {manifest.name}: {manifest.env_id} {manifest.suite} ({len(manifest.tasks)} tasks x "
          f"k={manifest.k}), harness {manifest.harness.name} {manifest.harness.version}, policy "
          f"{manifest.policy.name} -> {out}")
    print(f"check it:  polar leaderboard validate {out}")
    if out.resolve().parent != LOCAL_SUBMISSIONS.resolve():
        print(f"publish it: polar leaderboard build --submissions {out.resolve().parent} --out site/")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from polar.leaderboard.validate import validate

    try:
        checked = validate(Path(args.submission), replay=args.replay, sandbox=args.sandbox, jobs=args.jobs)
    except SubmissionError as e:
        print(f"REJECTED {args.submission}: {e}")
        return 1
    m, s = checked.manifest, checked.summary
    print(f"OK {m.name}: {m.env_id} {m.suite} ({len(m.tasks)} tasks x k={m.k}, {len(checked.episodes)} episodes "
          f"re-graded{', replayed' if args.replay else ''}), harness {m.harness.name} {m.harness.version}, "
          f"pass@1 {s['pass@1']:.3f}, mean reward {s['mean_reward']:.3f}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from polar.leaderboard.site import LOCAL_SUBMISSIONS, SUBMISSIONS, build

    folders = [Path(f) for f in args.submissions or ()]
    if not folders:
        folders = [SUBMISSIONS]
        if LOCAL_SUBMISSIONS.is_dir() and LOCAL_SUBMISSIONS.resolve() != SUBMISSIONS.resolve():
            folders.append(LOCAL_SUBMISSIONS)
    entries = build(folders, Path(args.out))
    print(f"built {Path(args.out) / 'index.html'} from {len(entries)} submission(s) in "
          f"{', '.join(map(str, folders))}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register `polar leaderboard ...` on the `polar` command's subparsers."""
    board = subparsers.add_parser("leaderboard", help="pack, validate (re-grading every episode) and publish results")
    sub = board.add_subparsers(dest="leaderboard_command", required=True)

    submit = sub.add_parser("submit", help="pack a finished `polar eval` run into a submission")
    submit.add_argument("run_dir", help="the --out directory of a `polar eval` run")
    submit.add_argument("--out", help="the submission: a directory, or a file ending .tar.gz "
                                      "(default: submissions/<run_dir name>, which `build` reads)")
    submit.add_argument("--name", help="the submission's name on the leaderboard (default: the --out name, less "
                                       ".tar.gz)")
    submit.add_argument("--setting", action="append", metavar="KEY=VALUE",
                        help="a policy setting the run did not record (e.g. max_new_tokens=96); repeatable")
    submit.set_defaults(fn=cmd_submit)

    validate = sub.add_parser("validate", help="check a submission, re-grade every episode and replay its recorded "
                                               "replies; exit 1 if rejected")
    validate.add_argument("submission", help="a submission directory or .tar.gz")
    validate.add_argument("--sandbox", help="re-grade and replay in this sandbox backend (default: the one the run "
                                            "used)")
    validate.add_argument("--no-replay", dest="replay", action="store_false",
                          help="skip the replay (then the artefacts' provenance is taken on trust: a swapped-in "
                               "artefact that earns its reward passes)")
    validate.add_argument("-j", "--jobs", type=int, default=4, help="episodes re-graded or replayed at once")
    validate.set_defaults(fn=cmd_validate)

    build = sub.add_parser("build", help="write the static leaderboard site")
    build.add_argument("--submissions", action="append", metavar="DIR",
                       help="a directory of submissions; repeatable (default: the baselines in "
                            "leaderboard/submissions/ and ./submissions/, where `submit` puts them)")
    build.add_argument("--out", required=True, help="the site's directory")
    build.set_defaults(fn=cmd_build)
    return board


def _scalar(text: str) -> str | int | float | bool | None:
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str | int | float | bool) or value is None else text
