from trie import Trie


def test_insert_contains_len():
    t = Trie()
    assert t.insert("car") is True
    assert t.insert("cart") is True
    assert t.insert("car") is False
    assert len(t) == 2
    assert t.contains("car") and t.contains("cart")
    assert not t.contains("ca")
    assert not t.contains("carts")


def test_constructor_and_empty_word():
    t = Trie(["b", "", "a", "b"])
    assert len(t) == 3
    assert t.contains("")
    assert t.starts_with("") == ["", "a", "b"]


def test_starts_with_sorted_and_case_sensitive():
    t = Trie(["apple", "app", "Apple", "application", "banana", "ap"])
    assert t.starts_with("app") == ["app", "apple", "application"]
    assert t.starts_with("A") == ["Apple"]
    assert t.starts_with("x") == []
    assert t.starts_with("applications") == []


def test_count_prefix():
    t = Trie(["app", "apple", "apply", "bat"])
    assert t.count_prefix("") == 4
    assert t.count_prefix("app") == 3
    assert t.count_prefix("appl") == 2
    assert t.count_prefix("c") == 0


def test_delete_and_prune():
    t = Trie(["app", "apple"])
    assert t.delete("ap") is False
    assert t.delete("apple") is True
    assert t.delete("apple") is False
    assert t.contains("app") and len(t) == 1
    assert t.count_prefix("appl") == 0
    assert t.starts_with("appl") == []
    assert t.delete("app") is True
    assert len(t) == 0
    assert t.count_prefix("a") == 0
    assert t.starts_with("") == []


def test_delete_inner_word_keeps_longer():
    t = Trie(["he", "hello", "help"])
    assert t.delete("he")
    assert t.starts_with("he") == ["hello", "help"]
    assert t.count_prefix("he") == 2
    t.insert("he")
    assert t.count_prefix("he") == 3


def test_longest_common_prefix():
    assert Trie().longest_common_prefix() == ""
    assert Trie(["flower", "flow", "flight"]).longest_common_prefix() == "fl"
    assert Trie(["interview", "internet", "interval"]).longest_common_prefix() == "inter"
    assert Trie(["abc", "abcd"]).longest_common_prefix() == "abc"
    assert Trie(["solo"]).longest_common_prefix() == "solo"
    t = Trie(["abc", "xyz"])
    t.delete("xyz")
    assert t.longest_common_prefix() == "abc"


def test_longest_prefix_of():
    t = Trie(["a", "ab", "abcd"])
    assert t.longest_prefix_of("abcde") == "abcd"
    assert t.longest_prefix_of("abc") == "ab"
    assert t.longest_prefix_of("b") is None
    t.insert("")
    assert t.longest_prefix_of("b") == ""
    assert t.longest_prefix_of("") == ""
