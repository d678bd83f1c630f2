"""Python client of the attention service (docs/python.md)."""
from .client import Client
from .errors import AttentionError
from .result import Result

__all__ = ["Client", "AttentionError", "Result"]
