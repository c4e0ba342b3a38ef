"""wordstat: count lines, words and the most common word of a text file."""
