"""polar/Web-v0: a task on a small web app in a real Chromium, graded from the app's server-side state.

`family.py` is the family (a fresh app per episode, grading); `browser.py` is one Chromium per episode and the
browser tools the agent acts through.
"""

from polar.envs.web.family import WebFamily

__all__ = ["WebFamily"]
