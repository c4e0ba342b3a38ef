import fnmatch
import random

from globmatch import filter_paths, match


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_literals_question_and_star():
    assert match("abc", "abc")
    assert not match("abc", "abcd")
    assert match("a?c", "abc") and not match("a?c", "ac")
    assert match("*.txt", "notes.txt") and match("*.txt", ".txt")
    assert not match("*.txt", "notes.txt.bak")
    assert match("*", "") and match("", "")
    assert not match("ABC", "abc")


def test_star_does_not_cross_slash():
    assert not match("*", "a/b")
    assert match("*/*", "a/b")
    assert match("src/*.py", "src/main.py")
    assert not match("src/*.py", "src/pkg/main.py")
    assert match("a**b", "axyzb") and not match("a**b", "ax/zb")


def test_double_star_segments():
    assert match("**/*.py", "x.py")
    assert match("**/*.py", "a/b/x.py")
    assert match("a/**", "a") and match("a/**", "a/b") and match("a/**", "a/b/c")
    assert match("a/**/b", "a/b") and match("a/**/b", "a/x/y/b")
    assert not match("a/**/b", "a/x/y/c")
    assert match("**", "any/deep/path") and match("**/**", "x")
    assert match("a/**/**/b", "a/b")
    assert match("a/b/", "a/b/") and not match("a/b/", "a/b")


def test_character_classes():
    assert match("[abc]x", "bx") and not match("[abc]x", "dx")
    assert match("[a-c0-9]", "7") and not match("[a-c0-9]", "d")
    assert match("[!a-c]", "d") and not match("[!a-c]", "b")
    assert match("[]]", "]") and match("[!]]", "a") and not match("[!]]", "]")
    assert match("[-a]", "-") and match("[a-]", "-") and not match("[a-]", "b")
    assert match("[\\]", "\\")
    assert match("file[0-9][0-9].log", "file42.log")


def test_escapes():
    assert match("\\*", "*") and not match("\\*", "x")
    assert match("what\\?", "what?") and not match("what\\?", "whatx")
    assert match("\\[a]", "[a]")
    assert match("a\\\\b", "a\\b")
    assert match("\\a", "a")


def test_invalid_patterns():
    for pattern in ["[abc", "[!]", "[a/b]", "[z-a]", "abc\\", "ok/[x"]:
        assert _raises_value_error(match, pattern, "whatever"), pattern
        assert _raises_value_error(filter_paths, pattern, []), pattern


def test_agrees_with_fnmatch_on_simple_patterns():
    rng = random.Random(3)
    pieces = ["a", "b", "?", "*", "[ab]", "[!a]", "[a-c]"]
    for _ in range(400):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))
        name = "".join(rng.choice("abc") for _ in range(rng.randint(0, 6)))
        assert match(pattern, name) == fnmatch.fnmatchcase(name, pattern), (pattern, name)


def test_no_exponential_blowup():
    assert not match("*a*a*a*a*a*a*a*b", "a" * 400)
    assert match("*a*a*a*a*a*a*a*", "a" * 400)
    deep = "/".join(["d"] * 60)
    assert not match("/".join(["**"] * 15) + "/x", deep)
    assert match("/".join(["**"] * 15) + "/d", deep)


def test_filter_paths():
    paths = ["src/app.py", "src/util/io.py", "README.md", "tests/test_app.py", "src/app.pyc"]
    assert filter_paths("src/**/*.py", paths) == ["src/app.py", "src/util/io.py"]
    assert filter_paths("**/test_*.py", paths) == ["tests/test_app.py"]
    assert filter_paths("*.md", paths) == ["README.md"]
    assert filter_paths("nothing", paths) == []
