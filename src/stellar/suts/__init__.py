"""Systems under test of general use: a Python callable and an HTTP endpoint."""

from stellar.suts.base import SUT
from stellar.suts.http import HttpSUT
from stellar.suts.python_callable import PythonSUT, to_response

__all__ = ["SUT", "HttpSUT", "PythonSUT", "to_response"]
