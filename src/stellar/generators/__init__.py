"""Generators turn candidates into test inputs."""

from stellar.generators.base import CallableGenerator, Generator, as_generator
from stellar.generators.template import TemplateGenerator

__all__ = ["CallableGenerator", "Generator", "TemplateGenerator", "as_generator"]
