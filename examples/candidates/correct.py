import sys


def add(a, b):
    return a + b


if __name__ == "__main__":
    a, b = map(int, sys.stdin.read().split())
    print(add(a, b))
