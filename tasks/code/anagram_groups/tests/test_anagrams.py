from anagrams import group_anagrams, largest_group


def test_example():
    words = ["listen", "Stone", "silent", "notes", "x"]
    assert group_anagrams(words) == [["listen", "silent"], ["Stone", "notes"], ["x"]]


def test_empty():
    assert group_anagrams([]) == []
    assert largest_group([]) == []


def test_duplicates_and_case():
    words = ["Dusty", "study", "dusty", "ab", "BA"]
    assert group_anagrams(words) == [["Dusty", "study", "dusty"], ["ab", "BA"]]


def test_every_character_counts():
    words = ["ab c", "cab", "c ab", "a-b", "b-a", "aab", "aba"]
    assert group_anagrams(words) == [["ab c", "c ab"], ["cab"], ["a-b", "b-a"], ["aab", "aba"]]


def test_multiplicity_matters():
    assert group_anagrams(["aab", "abb", "bab", "baa"]) == [["aab", "baa"], ["abb", "bab"]]


def test_largest_group_tie_takes_first():
    assert largest_group(["ab", "ba", "cd", "dc"]) == ["ab", "ba"]
    assert largest_group(["q", "ab", "cd", "dc", "ba", "dc"]) == ["cd", "dc", "dc"]
    assert largest_group(["solo"]) == ["solo"]
