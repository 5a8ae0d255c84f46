"""A generator that asks a chat model to write the test input a candidate describes.

The user message (and optionally the system message) comes from a Jinja2 template that sees
the candidate's values by kind (``content`` without its "none" values, ``style``,
``perturbation``, all of them as ``features``), the configured ``guidelines`` and
``few_shot`` examples, and ``examples``: the example inputs nearest to the candidate's
description (retrieval-augmented generation). The answer is cleaned of what models wrap
around an utterance, and the candidate's perturbation features are then applied by code,
with the test's rng, so that noise is exact and reproducible rather than left to the model.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from stellar.errors import StellarError
from stellar.features import KINDS, Candidate, FeatureSpace, load_feature_space
from stellar.llm.base import ChatModel, Message, PlannedCall, messages_tokens
from stellar.records import TestInput
from stellar.text.cleaning import clean_generation, is_refusal
from stellar.text.perturbations import Perturbation, perturbation
from stellar.text.retrieval import ExampleIndex

if TYPE_CHECKING:
    import jinja2

__all__ = ["LLMGenerator", "render_prompt"]

OUTPUT_TOKENS = 40  # a typical generated utterance, for cost estimates
TEMPLATE_VARIABLES = (*KINDS, "features", "guidelines", "few_shot", "examples")


class LLMGenerator:
    """A chat model writes each input from a Jinja2 prompt (use cases give the defaults).

    ``features`` (a space or its file) tells each feature's kind; without it ``kinds`` maps
    names to kinds and other features count as content. A perturbation value names an
    operator of :data:`~stellar.text.perturbations.PERTURBATIONS` via ``perturbations`` or,
    by default, with spaces turned into underscores ("delete words" -> ``delete_words``).
    """

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        model: str = Field(description="the model, e.g. openai:gpt-4o-mini")
        template: Path = Field(description="Jinja2 template of the user message")
        system: Path | None = Field(None, description="Jinja2 template of the system message")
        examples: Path | None = Field(None, description="example inputs retrieved as references")
        rag_k: int = Field(3, ge=0, description="retrieved examples per prompt")
        few_shot: list[str] = Field(default_factory=list)
        guidelines: list[str] = Field(default_factory=list)
        temperature: float = Field(0.2, ge=0, le=2)
        max_tokens: int = Field(120, ge=1)
        perturb: bool = Field(True, description="apply the perturbation features afterwards")
        embedder: str = Field("minilm", description="embeds the examples for retrieval")
        perturbations: dict[str, str] = Field(
            default_factory=dict, description="perturbation value -> operator name"
        )

    def __init__(
        self,
        *,
        model: ChatModel,
        template: str | Path,
        system: str | Path | None = None,
        features: FeatureSpace | str | Path | None = None,
        kinds: Mapping[str, str] | None = None,
        examples: str | Path | None = None,
        rag_k: int = 3,
        few_shot: str | Sequence[str] | None = None,
        guidelines: str | Sequence[str] | None = None,
        temperature: float = 0.2,
        max_tokens: int = 120,
        perturb: bool = True,
        perturbations: Mapping[str, str] | None = None,
        embedder: str = "minilm",
    ) -> None:
        if rag_k < 0:
            raise StellarError(f"llm generator: rag_k must be >= 0, got {rag_k}")
        if isinstance(features, str | Path):
            features = load_feature_space(features)
        self.model = model
        self.template = _load_template(template)
        self.system = _load_template(system) if system is not None else None
        self.kinds = {f.name: f.kind for f in features.features} if features is not None else {}
        self.kinds.update(kinds or {})
        wrong = {n: k for n, k in self.kinds.items() if k not in KINDS}
        if wrong:
            name, kind = next(iter(wrong.items()))
            raise StellarError(f"llm generator: feature {name!r} has unknown kind {kind!r}")
        self.index = ExampleIndex(examples, embedder=embedder) if examples else None
        self.rag_k = rag_k if self.index is not None else 0
        self.few_shot = _strings(few_shot)
        self.guidelines = _strings(guidelines)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.perturb = perturb
        self.perturbations = dict(perturbations or {})
        if features is not None:
            self._check(features)

    @staticmethod
    def check_config(space: FeatureSpace, options: Mapping[str, Any]) -> None:
        """At load: the templates name only variables they see and features of the space,
        in every branch (rendering one candidate would see only the branches it takes)."""
        for key in ("template", "system"):
            if options.get(key) is not None:
                check_template_fields(Path(options[key]), space, what=key)

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        seed = rng.randrange(2**31)
        examples: list[str] = []
        if self.index is not None and self.rag_k:
            found = await asyncio.to_thread(self.index.nearest, self.query(candidate), self.rag_k)
            examples = [e.text for e in found]
        messages = self.messages(candidate, examples)
        prompt = render_prompt(messages)
        completion = await self.model.complete(
            messages, temperature=self.temperature, max_tokens=self.max_tokens, seed=seed
        )
        text = clean_generation(completion.text)
        if not text:
            return TestInput(text="", prompt=prompt)
        if is_refusal(text) or is_refusal(completion.text):
            raise ValueError(f"generation refused: {completion.text.strip()[:80]}")
        if self.perturb:
            text = self.apply_perturbations(text, candidate, rng)
        return TestInput(text=text, prompt=prompt)

    def planned_calls(self, candidate: Candidate) -> list[PlannedCall]:
        """One generation call; retrieved examples are stood in for by the first ones."""
        stand_ins = [e.text for e in self.index.examples[: self.rag_k]] if self.index else []
        return [
            PlannedCall(
                model=self.model.name,
                role="generator",
                input_tokens=messages_tokens(self.messages(candidate, stand_ins)),
                output_tokens=min(OUTPUT_TOKENS, self.max_tokens),
            )
        ]

    # ---------------------------------------------------------------------- parts

    def variables(self, candidate: Candidate, examples: Sequence[str]) -> dict[str, Any]:
        """What the templates see."""
        by_kind: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        for name, value in candidate.values.items():
            kind = self.kinds.get(name, "content")
            if not (kind == "content" and value == "none"):
                by_kind[kind][name] = value
        return {
            **by_kind,
            "features": dict(candidate.values),
            "guidelines": self.guidelines,
            "few_shot": self.few_shot,
            "examples": list(examples),
        }

    def messages(self, candidate: Candidate, examples: Sequence[str]) -> list[Message]:
        """The chat request for ``candidate`` with the given retrieved examples."""
        variables = self.variables(candidate, examples)
        messages = [{"role": "user", "content": _render(self.template, variables)}]
        if self.system is not None:
            messages.insert(0, {"role": "system", "content": _render(self.system, variables)})
        return messages

    def query(self, candidate: Candidate) -> str:
        """The retrieval query: "name: value" lines of the content and style features."""
        variables = self.variables(candidate, [])
        pairs = [*variables["content"].items(), *variables["style"].items()]
        return "\n".join(f"{name}: {value}" for name, value in pairs)

    def operator(self, value: Any) -> Perturbation:
        """The perturbation operator a perturbation feature's value names."""
        name = self.perturbations.get(str(value), str(value).strip().lower().replace(" ", "_"))
        try:
            return perturbation(name.replace("-", "_"))
        except ValueError as exc:
            raise StellarError(
                f"llm generator: perturbation {value!r} names no operator ({exc}); "
                "map it with the 'perturbations' option"
            ) from None

    def apply_perturbations(self, text: str, candidate: Candidate, rng: random.Random) -> str:
        """Apply the operators of the candidate's perturbation features, in feature order."""
        for name, value in candidate.values.items():
            if self.kinds.get(name) == "perturbation" and value != "none":
                perturbed = self.operator(value)(text, rng)
                if text[:1].isupper():  # an operator may drop or change the first word
                    perturbed = perturbed[:1].upper() + perturbed[1:]
                text = perturbed
        return text

    def _check(self, space: FeatureSpace) -> None:
        """Fail now for unknown perturbation values or a template that cannot render."""
        for feature in space.features:
            if feature.kind == "perturbation" and self.perturb:
                for value in feature.values:
                    if value != "none":
                        self.operator(value)
        trial = space.candidate({f.name: f.values[0] for f in space.features})
        self.messages(trial, ["(example)"] * self.rag_k)


def render_prompt(messages: Sequence[Message]) -> str:
    """A chat request as readable text: "system: ...", blank line, "user: ..."."""
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)


def _strings(items: str | Sequence[str] | None) -> list[str]:
    """A list of strings from None, one string or a sequence of them."""
    if items is None:
        return []
    return [items] if isinstance(items, str) else [str(item) for item in items]


def _load_template(path: str | Path, what: str = "generator template") -> jinja2.Template:
    """Compile a template file; includes are looked up in its folder; ``what`` names it in
    errors."""
    import jinja2  # when a generator is built, not when the plugins are listed

    path = Path(path)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(path.parent),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    try:
        return env.get_template(path.name)
    except jinja2.TemplateNotFound as exc:
        missing = path if exc.name == path.name else f"{exc.name} (included)"
        raise StellarError(f"{what} {path}: file not found: {missing}") from None
    except jinja2.TemplateSyntaxError as exc:
        raise StellarError(
            f"{what} {exc.filename or path}: line {exc.lineno}: {exc.message}"
        ) from None


GUARDS = ("defined", "undefined")


def check_template_fields(
    path: Path, space: FeatureSpace, what: str = "generator template"
) -> None:
    """Refuse a template (StellarError naming it and the line) that names a variable the
    generator does not give (``{{ contnet.x }}``) or a feature the space does not hold under
    that kind (``{{ style.nonexistent }}``, ``{{ features["nope"] }}``)."""
    from jinja2 import meta, nodes

    template = _load_template(path, what)  # a missing file or a syntax error, named
    env = template.environment
    assert env.loader is not None
    tree = env.parse(env.loader.get_source(env, path.name)[0])
    local = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    seen = {*TEMPLATE_VARIABLES, *env.globals, *local}  # set in a branch: "undeclared" too
    for name in sorted(meta.find_undeclared_variables(tree) - seen):
        line = next(n.lineno for n in tree.find_all(nodes.Name) if n.name == name)
        raise StellarError(
            f"{what} {path}: line {line}: {name!r} is not a variable a template "
            f"sees ({', '.join(TEMPLATE_VARIABLES)})"
        )
    fields = {kind: [f.name for f in space.features if f.kind == kind] for kind in KINDS}
    fields["features"] = [f.name for f in space.features]

    def named(node: nodes.Node) -> tuple[str | None, str | None]:
        """(owner, key) of ``content.key`` or ``features["key"]``; None where not that."""
        if not isinstance(node, nodes.Getattr | nodes.Getitem):
            return None, None
        owner = node.node.name if isinstance(node.node, nodes.Name) else None
        if isinstance(node, nodes.Getattr):
            return owner, None if hasattr(dict, node.attr) else node.attr  # content.items()
        return owner, node.arg.value if isinstance(node.arg, nodes.Const) else None

    # `content.x is defined`: a template shared by spaces with and without the feature
    guarded = {named(t.node) for t in tree.find_all(nodes.Test) if t.name in GUARDS}
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        owner, key = named(node)
        if owner not in fields or owner in local or (owner, key) in guarded:
            continue
        if key is not None and key not in fields[owner]:
            feature = "feature" if owner == "features" else f"{owner} feature"
            raise StellarError(
                f"{what} {path}: line {node.lineno}: {owner}.{key}: no {feature} "
                f"{key!r} ({feature}s: {', '.join(fields[owner]) or 'none'})"
            )


def _render(template: jinja2.Template, variables: Mapping[str, Any]) -> str:
    import jinja2  # already loaded by _load_template

    try:
        return template.render(variables).strip()
    except Exception as exc:  # undefined variables, but also errors in template expressions
        reason = str(exc) if isinstance(exc, jinja2.TemplateError) else repr(exc)
        raise StellarError(f"generator template {template.filename}: {reason}") from None
