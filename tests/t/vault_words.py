"""vault_words.py: the made-up words the vault gate tests (t0559, t0561,
t0564) build their pages from: everyday words that many pages hold, so
they weigh little, and padding that carries no topic. One list, so the
tests' pages stay alike and a change to the words is made once."""
EVERYDAY = "harbor lantern weather copper meadow river stone candle".split()
PAD = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
