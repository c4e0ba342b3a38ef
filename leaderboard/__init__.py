"""The leaderboard: submissions (an eval run plus a manifest), their validation by re-grading, the static site.

`polar leaderboard submit RUN_DIR` packs a `polar eval` run; `polar leaderboard validate SUB` recomputes every
number in it and re-grades every episode; `polar leaderboard build --out SITE` writes the site. The format is in
`submission.py`, and in this folder's README.
"""

from polar.leaderboard.cli import add_parser

__all__ = ["add_parser"]
