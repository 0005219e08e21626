"""Packages are found, not listed, so a new subpackage ships in the wheel.

pyproject.toml cannot combine discovery with one mapped folder: the top-level
workloads/ ships inside the package as dlcprof.bundled (package-dir there), so
it is added to what discovery finds. report/templates holds only data: found as
a namespace package so its files ship as that package's data.
"""

from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["dlcprof*"]), "dlcprof.bundled"])
