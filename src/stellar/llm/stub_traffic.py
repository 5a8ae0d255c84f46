"""How the stub server behaves under load: answer latency and rate limits.

Latency is fixed (``fixed:0.5``) or drawn from a seeded, heavy-tailed log-normal
distribution (``lognormal:median=0.5,sigma=0.8``, optionally ``max=30``), like the answer
times of a real model server. Rate limits answer HTTP 429 with the wait a client should
observe: a token bucket of requests per second, and a cap on requests in flight.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

LATENCY_FORMS = "fixed:SECONDS or lognormal:median=SECONDS,sigma=S[,max=SECONDS]"


@dataclass(frozen=True)
class Latency:
    """Seconds before each answer: ``median`` alone (``sigma`` 0) is a fixed delay."""

    median: float = 0.0
    sigma: float = 0.0
    cap: float | None = None

    @property
    def mean(self) -> float:
        """The distribution's mean (without the cap): median x exp(sigma^2 / 2)."""
        return self.median * math.exp(self.sigma**2 / 2)

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (without the cap)."""
        from statistics import NormalDist

        return self.median * math.exp(self.sigma * NormalDist().inv_cdf(q))

    def sampler(self, seed: int = 0) -> LatencySampler:
        return LatencySampler(self, seed)

    def __str__(self) -> str:
        if not self.sigma:
            return f"fixed {self.median:g} s"
        cap = f", at most {self.cap:g} s" if self.cap is not None else ""
        shape = f"median {self.median:g} s, sigma {self.sigma:g}, mean {self.mean:.3g} s"
        return f"log-normal, {shape}{cap}"


class LatencySampler:
    """Draws latencies in turn; the same seed gives the same sequence."""

    def __init__(self, latency: Latency, seed: int = 0) -> None:
        self.latency = latency
        self._rng = random.Random(seed)
        self._mu = math.log(latency.median) if latency.median > 0 else 0.0

    def draw(self) -> float:
        latency = self.latency
        if not latency.sigma:
            return latency.median
        value = self._rng.lognormvariate(self._mu, latency.sigma)
        return value if latency.cap is None else min(value, latency.cap)


def parse_latency(text: str) -> Latency:
    """``fixed:0.5``, a bare ``0.5``, or ``lognormal:median=0.5,sigma=0.8[,max=30]``."""
    kind, _, rest = text.strip().partition(":")
    if not rest:
        kind, rest = "fixed", kind
    try:
        if kind == "fixed":
            return _checked(Latency(float(rest)))
        if kind == "lognormal":
            fields = dict(part.split("=", 1) for part in rest.split(","))
            unknown = set(fields) - {"median", "sigma", "max"}
            if unknown or not {"median", "sigma"} <= set(fields):
                raise ValueError
            cap = float(fields["max"]) if "max" in fields else None
            return _checked(Latency(float(fields["median"]), float(fields["sigma"]), cap))
    except ValueError as exc:
        if str(exc).startswith("latency"):
            raise
    raise ValueError(f"latency {text!r}: write {LATENCY_FORMS}")


def _checked(latency: Latency) -> Latency:
    numbers = (latency.median, latency.sigma, latency.cap or 0.0)
    if not all(math.isfinite(x) and x >= 0 for x in numbers):
        raise ValueError(f"latency {latency.median}, {latency.sigma}: must be finite and >= 0")
    if latency.cap is not None and latency.cap <= 0:
        raise ValueError("latency max: must be > 0")
    return latency


class RequestRate:
    """A token bucket: ``rps`` requests per second, at most ``burst`` at once."""

    def __init__(self, rps: float, burst: int | None = None) -> None:
        if not rps > 0:
            raise ValueError(f"requests per second {rps}: must be > 0")
        self.rps = rps
        self.burst = burst if burst is not None else max(1, math.ceil(rps))
        if self.burst < 1:
            raise ValueError(f"burst {burst}: must be >= 1")
        self.tokens = float(self.burst)
        self._last: float | None = None

    def admit(self, now: float) -> float:
        """0 when the request may go ahead (a token taken), else seconds until one is free."""
        if self._last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self._last) * self.rps)
        self._last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rps
