from template import TemplateError, render


def _error(template, context=None):
    try:
        render(template, context or {})
    except TemplateError:
        return True
    return False


def test_plain_text_and_output():
    assert render("Hello, world!", {}) == "Hello, world!"
    assert render("Hi {{ name }}!", {"name": "Ada"}) == "Hi Ada!"
    assert render("{{name}}{{  name  }}", {"name": "x"}) == "xx"
    assert render("a }} b %} c #}", {}) == "a }} b %} c #}"
    assert render("", {}) == ""


def test_value_rendering_and_paths():
    ctx = {"user": {"name": "Bo", "tags": ["a", "b"], "age": 7}, "flag": True, "none": None,
           "pair": (1, 2)}
    assert render("{{ user.name }}/{{ user.tags.1 }}/{{ user.age }}", ctx) == "Bo/b/7"
    assert render("[{{ flag }}][{{ none }}][{{ pair.0 }}]", ctx) == "[true][][1]"
    assert render("{{ user.tags }}", ctx) == "['a', 'b']"


def test_filters():
    ctx = {"s": "  Mixed Case  ", "html": "<a href=\"x\">Tom & Jerry's</a>", "items": [1, 2, 3], "n": 5}
    assert render("{{ s | trim | upper }}|{{ s|lower|trim }}", ctx) == "MIXED CASE|mixed case"
    assert render("{{ html | escape }}", ctx) == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
    assert render("{{ items | len }} {{ s | trim | len }}", ctx) == "3 10"
    assert _error("{{ n | len }}", ctx)


def test_if_elif_else():
    template = "{% if a %}A{% elif not b %}notB{% elif c.d %}CD{% else %}none{% endif %}"
    assert render(template, {"a": 1}) == "A"
    assert render(template, {"a": 0, "b": False}) == "notB"
    assert render(template, {"b": True, "c": {"d": [0]}}) == "CD"
    assert render(template, {"b": True, "c": {"d": []}}) == "none"
    assert render("{% if missing.deep %}yes{% endif %}.", {}) == "."
    assert render("{% if not missing %}yes{% endif %}", {}) == "yes"


def test_for_loops_and_loop_variable():
    template = "{% for x in xs %}{{ loop.index }}:{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}"
    assert render(template, {"xs": ["a", "b", "c"]}) == "1:a, 2:b, 3:c"
    assert render(template, {"xs": []}) == ""
    nested = ("{% for row in rows %}[{% for v in row %}{{ v }}{% if loop.first %}*{% endif %}"
              "{% endfor %}]{% endfor %}")
    assert render(nested, {"rows": [[1, 2], (3,)]}) == "[1*2][3*]"


def test_loop_shadowing_is_scoped():
    template = "{{ x }}{% for x in xs %}{{ x }}{% endfor %}{{ x }}"
    assert render(template, {"x": "o", "xs": [1, 2]}) == "o12o"
    assert _error("{% for x in xs %}{% endfor %}{{ loop.index }}", {"xs": [1]})


def test_comments():
    assert render("a{# hidden\nmulti-line {{ not parsed }} #}b", {}) == "ab"
    assert _error("a{# never closed", {})


def test_runtime_errors():
    assert _error("{{ missing }}")
    assert _error("{{ user.nope }}", {"user": {}})
    assert _error("{{ xs.5 }}", {"xs": [1]})
    assert _error("{% for x in missing %}{% endfor %}")
    assert _error("{% for x in s %}{% endfor %}", {"s": "abc"})
    assert _error("{% for x in d %}{% endfor %}", {"d": {"a": 1}})
    assert render("{% if a %}{{ missing }}{% endif %}ok", {}) == "ok"
    assert render("{% for x in xs %}{{ x.nope }}{% endfor %}ok", {"xs": []}) == "ok"


def test_syntax_errors():
    bad = [
        "{{ name", "{% if a", "{{ }}", "{{ a | }}", "{{ a | shout }}", "{{ a. }}", "{{ 1a }}",
        "{% if %}{% endif %}", "{% if a b %}{% endif %}", "{% endif %}", "{% if a %}",
        "{% if a %}{% else %}{% elif b %}{% endif %}", "{% if a %}{% else %}{% else %}{% endif %}",
        "{% for x of xs %}{% endfor %}", "{% for 1x in xs %}{% endfor %}", "{% for x in xs %}",
        "{% endfor %}", "{% if a %}{% endfor %}", "{% while a %}", "{% endif x %}", "{% else %}",
        "{% %}", "{% for x in xs %}{% endif %}{% endfor %}",
    ]
    for template in bad:
        assert _error(template, {"a": 1, "name": "n", "xs": []}), template
    assert _error("{% for x in xs %}{{ x | bogus }}{% endfor %}", {"xs": []})
    assert issubclass(TemplateError, ValueError)
