"""Systems under test of general use: a Python callable, an HTTP endpoint, a chat model."""

from stellar.suts.base import SUT
from stellar.suts.chat import ChatSUT
from stellar.suts.http import HttpSUT
from stellar.suts.python_callable import PythonSUT, to_response

__all__ = ["SUT", "ChatSUT", "HttpSUT", "PythonSUT", "to_response"]
