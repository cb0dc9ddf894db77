def add(a, b):
    # Off by one on purpose: the demo's "wrong" candidate.
    if a > 5:
        return a + b + 1
    return a + b
