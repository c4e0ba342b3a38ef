from semver import Version, compare, parse, satisfies


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_parse_full():
    v = parse("1.2.3-alpha.1+build.007")
    assert v == Version(1, 2, 3, ("alpha", "1"), ("build", "007"))
    assert v.major == 1 and v.prerelease == ("alpha", "1")
    assert parse("0.0.0") == Version(0, 0, 0, (), ())
    assert parse("10.20.30+meta") == Version(10, 20, 30, (), ("meta",))
    assert parse("1.0.0-0a.x-y") == Version(1, 0, 0, ("0a", "x-y"), ())


def test_parse_invalid():
    bad = ["1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "v1.2.3", " 1.2.3", "1.2.3-",
           "1.2.3+", "1.2.3-alpha..1", "1.2.3-alpha.01", "1.2.3-al_pha", "1.2.3+bu ild",
           "1.2.-3", "", "1.2.3-\u00e9"]
    for text in bad:
        assert _raises_value_error(parse, text), text


def test_compare_core():
    assert compare("1.0.0", "2.0.0") == -1
    assert compare("2.1.0", "2.0.9") == 1
    assert compare("1.10.0", "1.9.0") == 1
    assert compare("3.3.3", "3.3.3") == 0


def test_compare_prerelease_chain():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
             "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    for lower, higher in zip(chain, chain[1:], strict=False):
        assert compare(lower, higher) == -1, (lower, higher)
        assert compare(higher, lower) == 1, (lower, higher)


def test_compare_details():
    assert compare("1.0.0+a", "1.0.0+b") == 0
    assert compare("1.0.0-1", "1.0.0-A") == -1
    assert compare("1.0.0-Z", "1.0.0-a") == -1
    assert compare("1.0.0-a.b.c", "1.0.0-a.b") == 1
    assert compare("1.0.0-2", "1.0.0-10") == -1
    assert _raises_value_error(compare, "1.0.0", "1.0")


def test_satisfies():
    assert satisfies("1.5.0", ">=1.2.3, <2.0.0")
    assert not satisfies("2.0.0", ">=1.2.3,<2.0.0")
    assert satisfies("1.4.0-rc.1", ">=1.3.0, <1.4.0")
    assert not satisfies("1.4.0", ">=1.3.0, <1.4.0")
    assert satisfies("1.4.0-rc.1", ">1.3.0 , < 1.4.0")
    assert satisfies("1.0.0+build5", "==1.0.0")
    assert satisfies("1.0.1", "!=1.0.0")
    assert not satisfies("1.0.0", "!= 1.0.0")
    assert satisfies("0.9.9", "<=0.9.9")


def test_satisfies_invalid_specs():
    for spec in ["", "  ", ">=1.0.0,", "=1.0.0", "1.0.0", "~1.0.0", ">=1.0", ">= 1.0.0 <2.0.0"]:
        assert _raises_value_error(satisfies, "1.0.0", spec), spec
    assert _raises_value_error(satisfies, "1.0", ">=1.0.0")
