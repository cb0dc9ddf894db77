"""Installs the execeval client: pip install ./clients/python

No pyproject.toml on purpose: without one, pip builds the package with the
setuptools already installed (Debian's python3-setuptools), offline; with
one, it would first fetch setuptools into an isolated build environment."""
import os

from setuptools import setup

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md"), encoding="utf-8") as f:
    README = f.read()

setup(
    name="execeval",
    version="0.1.0",
    description="Client for execeval serve: run model-written Python in execeval's sandbox over HTTP",
    long_description=README,
    long_description_content_type="text/markdown",
    packages=["execeval"],
    python_requires=">=3.8",
)
