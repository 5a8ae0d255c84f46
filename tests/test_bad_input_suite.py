"""Bad input, case by case from tables: configurations, command-line arguments, archives and
suite files. Every case ends with exit code 2 and one line ``stellar: error: ...`` that names
the offending setting or file, never a traceback; the valid controls beside them succeed.

Commands run in this process (``conftest.cli``); the one run they share takes a second, and no
case loads a model or sends a request.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import TOY, cli

from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME, SUMMARY_NAME

BASE = f"use_case: {TOY}\n"  # the toy use case: no model, no embedder, 100 tests
MODEL = "openai-compatible:m@http://127.0.0.1:9/v1"  # never called: every case stops at load
LLM = f"generator: {{type: llm, model: '{MODEL}', perturb: false, template: "
POST = "oracle: {below: {quality: 0.1}, post_search: {target: 'toy:strict', below: {strict: 0.5}}}"
# a test server another test of the same process left behind may report a dropped client
LEFT_BEHIND = re.compile(r"-{40}\nException occurred during processing.*?-{40}\n", re.S)

# ------------------------------------------------------------------------------------ tables

# (case, the whole file, what the line names)
FILES = [
    ("empty", b"", ("empty.yaml", "the file is empty")),
    ("comments-only", b"# nothing here\n", ("comments-only.yaml", "the file is empty")),
    ("empty-mapping", b"{}\n", ("empty-mapping.yaml", "the file is empty")),
    ("a-list", b"- use_case\n- navi\n", ("a-list.yaml", "expected a mapping")),
    ("a-scalar", b"just some text\n", ("a-scalar.yaml", "expected a mapping")),
    ("a-number", b"42\n", ("a-number.yaml", "expected a mapping")),
    ("unclosed-bracket", b"seed: [1, 2\n", ("unclosed-bracket.yaml", "not valid YAML")),
    ("tab-indent", b"budget:\n\ttests: 3\n", ("tab-indent.yaml", "not valid YAML")),
    ("unclosed-quote", b'name: "abc\n', ("unclosed-quote.yaml", "not valid YAML")),
    ("two-documents", b"seed: 1\n---\nseed: 2\n", ("two-documents.yaml",)),
    ("unknown-alias", b"seed: *nowhere\n", ("unknown-alias.yaml",)),
    ("python-tag", b"!!python/object/apply:os.system [echo]\n", ("python-tag.yaml",)),
    ("binary", b"\x00\xff\xfe\x01binary", ("binary.yaml", "not UTF-8")),
    ("latin-1", "name: caf\xe9\n".encode("latin-1"), ("latin-1.yaml", "not UTF-8")),
    ("nul-escape", b'name: "a\\0b"\n', ("nul-escape.yaml",)),
    ("deep-nesting", b"x: " + b"[" * 300 + b"]" * 300 + b"\n", ("deep-nesting.yaml", "nested")),
    ("duplicate-key", BASE.encode() + b"seed: 1\nseed: 2\n", ("duplicate key 'seed'",)),
    ("no-use-case", b"seed: 1\n", ("no-use-case.yaml", "required setting is missing")),
    ("unknown-use-case", b"use_case: nowhere_at_all\n", ("nowhere_at_all",)),
    ("use-case-number", b"use_case: 5\n", ("use_case",)),
    ("use-case-list", b"use_case: [navi]\n", ("use_case",)),
    (
        "navi-objective",
        b"use_case: navi\nfitness: {target: navi, objectives: [nope]}\n",
        ("fitness.objectives", "'nope'", "response, content"),
    ),
    (
        "navi-threshold",
        b"use_case: navi\noracle: {below: {response: 0.7, contnet: 0.5}}\n",
        ("oracle.below.contnet", "gives no score"),
    ),
    (
        "safety-threshold",
        b"use_case: safety\noracle: {below: {safe: 0.5}}\n",
        ("oracle.below.safe", "safety-score"),
    ),
    (
        "safety-post-search",
        b"use_case: safety\noracle: {below: {safety: 0.5}, "
        b"post_search: {target: safety-verdict, below: {unsafe: 0.5}}}\n",
        ("oracle.post_search.below.unsafe", "safety-verdict"),
    ),
]

# (case, YAML written after BASE, what the line names)
SETTINGS = [
    # types and bounds
    ("features-number", "features: 5\n", ("features", "expected a feature file")),
    ("features-bool", "features: true\n", ("features", "expected a feature file")),
    ("features-missing-file", "features: missing.yaml\n", ("missing.yaml", "file not found")),
    ("features-empty-list", "features: []\n", ("features",)),
    ("features-no-values", "features: [{name: a, kind: content}]\n", ("features",)),
    ("features-bad-kind", "features: [{name: a, kind: tone, values: [x]}]\n", ("kind",)),
    ("features-a-folder", "features: .\n", ("a folder",)),
    ("name-number", "name: 5\n", ("name",)),
    ("name-a-path", "name: a/b\n", ("name", "plain name")),
    ("name-dot-dot", "name: '..'\n", ("name", "plain name")),
    ("seed-negative", "seed: -1\n", ("seed",)),
    ("seed-fraction", "seed: 1.5\n", ("seed",)),
    ("seed-text", "seed: abc\n", ("seed",)),
    ("seed-huge", "seed: 99999999999999999999\n", ("seed",)),
    ("concurrency-zero", "concurrency: 0\n", ("concurrency",)),
    ("concurrency-huge", "concurrency: 5000\n", ("concurrency",)),
    ("concurrency-text", "concurrency: many\n", ("concurrency",)),
    ("generations-zero", "generations_in_flight: 0\n", ("generations_in_flight",)),
    ("sut-timeout-zero", "sut_timeout: 0\n", ("sut_timeout",)),
    ("max-input-chars-zero", "max_input_chars: 0\n", ("max_input_chars",)),
    ("max-answer-chars-text", "max_answer_chars: lots\n", ("max_answer_chars",)),
    ("out-number", "out: 5\n", ("out", "expected a path")),
    ("out-a-file", f"out: {TOY / 'run.yaml'}\n", ("out", "not a folder")),
    ("import-paths-number", "import_paths: 5\n", ("import_paths", "list of folders")),
    ("import-paths-numbers", "import_paths: [1, 2]\n", ("import_paths",)),
    ("unknown-setting", "colour: red\n", ("colour", "unknown setting")),
    ("unknown-nested-setting", "judge: {voters: 3}\n", ("judge.voters", "unknown setting")),
    ("budget-number", "budget: 5\n", ("budget", "expected a mapping")),
    ("budget-tests-zero", "budget: {tests: 0}\n", ("budget.tests",)),
    ("budget-tests-text", "budget: {tests: abc}\n", ("budget.tests",)),
    ("budget-time-word", "budget: {time: soon}\n", ("budget.time",)),
    ("budget-time-negative", "budget: {time: -1}\n", ("budget.time",)),
    ("budget-cost-zero", "budget: {cost: 0}\n", ("budget.cost",)),
    ("budget-error-rate", "budget: {max_error_rate: 2}\n", ("budget.max_error_rate",)),
    ("budget-discarded", "budget: {max_discarded: -1}\n", ("budget.max_discarded",)),
    ("duplicates-threshold", "duplicates: {threshold: 2}\n", ("duplicates.threshold",)),
    ("duplicates-embedder", "duplicates: {embedder: bogus}\n", ("duplicates.embedder",)),
    ("judge-even-votes", "judge: {votes: 2}\n", ("judge", "odd")),
    ("judge-votes-zero", "judge: {votes: 0}\n", ("judge.votes",)),
    ("judge-temperature", "judge: {temperature: 5}\n", ("judge.temperature",)),
    ("judge-model-bad", "judge: {model: 'nope:x'}\n", ("judge.model",)),
    ("judge-model-unused", f"judge: {{model: '{MODEL}'}}\n", ("judge.model", "no LLM judge")),
    ("usecase-number", "usecase: 5\n", ("usecase", "mapping")),
    ("usecase-unknown-option", "usecase: {nope: 1}\n", ("nope",)),
    ("llm-number", "llm: 5\n", ("llm", "expected a mapping")),
    (
        "llm-key-pasted",
        "llm: {endpoints: {openai: {api_key_env: sk-abcdefghijklmnopqrstuv12}}}\n",
        ("api_key_env",),
    ),
    ("llm-rpm-zero", "llm: {endpoints: {openai: {rpm: 0}}}\n", ("rpm",)),
    ("llm-base-url", "llm: {endpoints: {openai: {base_url: 'http://a b/v1'}}}\n", ("base_url",)),
    ("response-schema-missing", "response_schema: missing.json\n", ("missing.json",)),
    ("response-schema-not-json", f"response_schema: {TOY / 'run.yaml'}\n", ("run.yaml", "JSON")),
    (
        "response-schema-invalid",
        "response_schema: invalid.schema.json\n",
        ("invalid.schema.json", "JSON Schema"),
    ),
    # algorithms
    ("algorithm-number", "algorithm: 5\n", ("algorithm", "expected a mapping")),
    ("algorithm-unknown", "algorithm: {name: nope}\n", ("nope",)),
    (
        "algorithm-dotted-missing",
        "algorithm: {name: 'nowhere_module:Search'}\n",
        ("nowhere_module",),
    ),
    ("population-zero", "algorithm: {population: 0}\n", ("algorithm.population",)),
    ("population-huge", "algorithm: {population: 1000000000000}\n", ("algorithm.population",)),
    ("algorithm-option-unknown", "algorithm: {name: random, bogus: 1}\n", ("bogus",)),
    ("twise-strength", "algorithm: {name: twise, strength: 100}\n", ("algorithm.twise.strength",)),
    ("mutation-out-of-range", "algorithm: {stellar: {mutation: 7}}\n", ("mutation",)),
    ("section-no-algorithm", "algorithm: {nosuch: {x: 1}}\n", ("algorithm.nosuch",)),
    ("surrogate-learner", "algorithm: {name: surrogate, learner: svm}\n", ("learner", "forest")),
    ("surrogate-pool-zero", "algorithm: {name: surrogate, pool: 0}\n", ("pool",)),
    ("surrogate-explore", "algorithm: {name: surrogate, explore: 1.5}\n", ("explore",)),
    # plugins
    ("sut-number", "sut: 5\n", ("sut", "expected a mapping")),
    ("sut-no-type", "sut: {type: python}\n", ("sut", "target")),
    ("sut-unknown-type", "sut: {type: nope}\n", ("nope",)),
    ("sut-module-missing", "sut: {target: 'nowhere_module:answer'}\n", ("nowhere_module",)),
    ("sut-function-missing", "sut: {target: 'toy:nothing'}\n", ("toy:nothing",)),
    ("sut-option-unknown", "sut: {target: 'toy:answer', options: {bogus: 1}}\n", ("bogus",)),
    ("generator-unknown-type", "generator: {type: nope}\n", ("nope",)),
    (
        "generator-option-unknown",
        "generator: {target: 'toy:describe', options: {x: 1}}\n",
        ("generator.options.x",),
    ),
    (
        "generator-model-bad",
        "generator: {type: llm, model: bad, template: good.j2}\n",
        ("generator.model",),
    ),
    ("generator-llm-no-template", f"generator: {{type: llm, model: '{MODEL}'}}\n", ("template",)),
    ("fitness-unknown", "fitness: {target: nope}\n", ("nope",)),
    ("fitness-number", "fitness: {target: 5}\n", ("fitness.target",)),
    (
        "fitness-option-unknown",
        "fitness: {target: 'toy:quality', options: {x: 1}}\n",
        ("fitness.options.x",),
    ),
    (
        "objectives-text",
        "fitness: {target: 'toy:quality', objectives: quality}\n",
        ("fitness.objectives",),
    ),
    ("oracle-empty", "oracle: {below: null}\n", ("oracle", "give either")),
    (
        "oracle-both",
        "oracle: {below: {quality: 0.1}, target: 'toy:below'}\n",
        ("oracle", "not both"),
    ),
    ("oracle-threshold-above-one", "oracle: {below: {quality: 2}}\n", ("oracle.below.quality",)),
    ("oracle-threshold-text", "oracle: {below: {quality: low}}\n", ("oracle.below.quality",)),
    (
        "oracle-unknown",
        "fitness: {objectives: [quality]}\noracle: {below: null, target: nope}\n",
        ("nope",),
    ),
    (
        "oracle-without-thresholds",
        "oracle: {below: null, target: 'toy:below'}\n",
        ("fitness.objectives",),
    ),
    (
        "post-search-no-below",
        "oracle: {below: {quality: 0.1}, post_search: {target: 'toy:strict'}}\n",
        ("oracle.post_search.below", "missing"),
    ),
    (
        "post-search-unknown",
        "oracle: {below: {quality: 0.1}, post_search: {target: nope, below: {x: 0.5}}}\n",
        ("nope",),
    ),
    (
        "post-search-no-threshold",
        "oracle: {below: {quality: 0.1}, post_search: {target: 'toy:strict', below: {}}}\n",
        ("oracle.post_search.below",),
    ),
    # scores a fitness that declares its scores does not give
    (
        "declared-threshold",
        "fitness: {target: 'suite_plugins:scored'}\noracle: {below: {qualty: 0.5}}\n",
        ("oracle.below.qualty", "suite_plugins:scored", "quality"),
    ),
    (
        "declared-objective",
        "fitness: {target: 'suite_plugins:scored', objectives: [quality, speed]}\n",
        ("fitness.objectives", "'speed'"),
    ),
    # URLs
    ("url-no-host", "sut: {type: http, url: 'http://'}\n", ("sut.url", "no host")),
    ("url-empty-host", "sut: {type: http, url: 'http:///answer'}\n", ("sut.url", "no host")),
    ("url-port-only", "sut: {type: http, url: 'http://:8000/x'}\n", ("sut.url", "no host")),
    ("url-space", "sut: {type: http, url: 'http://exa mple.com/x'}\n", ("sut.url", "space")),
    ("url-port-99999", "sut: {type: http, url: 'http://localhost:99999/x'}\n", ("sut.url", "port")),
    ("url-port-0", "sut: {type: http, url: 'http://localhost:0/x'}\n", ("sut.url", "port")),
    ("url-port-word", "sut: {type: http, url: 'http://localhost:http/x'}\n", ("sut.url", "port")),
    ("url-bad-ipv6", "sut: {type: http, url: 'http://[::1/x'}\n", ("sut.url", "IPv6")),
    ("url-ftp", "sut: {type: http, url: 'ftp://example.com/x'}\n", ("sut.url", "http://")),
    ("url-no-scheme", "sut: {type: http, url: 'example.com/x'}\n", ("sut.url", "http://")),
    ("url-missing", "sut: {type: http}\n", ("url",)),
    (
        "url-method",
        "sut: {type: http, url: 'http://localhost:9/x', method: GET}\n",
        ("sut.method",),
    ),
    (
        "url-timeout",
        "sut: {type: http, url: 'http://localhost:9/x', timeout: 0}\n",
        ("sut.timeout",),
    ),
    (
        "url-answer-path",
        "sut: {type: http, url: 'http://localhost:9/x', answer: '$[[['}\n",
        ("$[[[",),
    ),
    (
        "header-credential",
        "sut: {type: http, url: 'http://localhost:9/x', headers: "
        "{Authorization: 'Bearer abc123'}}\n",
        ("sut.headers.Authorization",),
    ),
    # conversations with an HTTP system
    (
        "conversation-state",
        "sut: {type: http, url: 'http://localhost:9/x', conversation: {state: memory}}\n",
        ("sut.conversation.state", "session"),
    ),
    (
        "conversation-no-session-id",
        "sut: {type: http, url: 'http://localhost:9/x', conversation: {state: session}}\n",
        ("sut.conversation", "{{session_id}}", "session_header"),
    ),
    (
        "conversation-no-messages",
        "sut: {type: http, url: 'http://localhost:9/x', conversation: {state: history}}\n",
        ("sut.conversation", "{{messages}}"),
    ),
    (
        "conversation-from-not-jsonpath",
        "sut: {type: http, url: 'http://localhost:9/x', body: {t: '{{input}}', "
        "s: '{{session_id}}'}, conversation: {state: session, session_id: {from: '$[[['}}}\n",
        ("sut.conversation.session_id.from", "JSONPath"),
    ),
    (
        "conversation-unknown-key",
        "sut: {type: http, url: 'http://localhost:9/x', body: {m: '{{messages}}'}, "
        "conversation: {state: history, memory: 3}}\n",
        ("sut.conversation.memory",),
    ),
    (
        "conversation-session-header-without-session",
        "sut: {type: http, url: 'http://localhost:9/x', "
        "conversation: {state: squash, session_header: X-Session}}\n",
        ("sut.conversation", "session_header", "state: session"),
    ),
    (
        "conversation-messages-without-history",
        "sut: {type: http, url: 'http://localhost:9/x', body: {m: '{{messages}}'}}\n",
        ("sut.conversation", "{{messages}}", "history"),
    ),
    (
        "model-url-port",
        "generator: {type: llm, model: 'openai-compatible:m@http://h:99999/v1', "
        "template: good.j2}\n",
        ("generator.model", "port"),
    ),
    # templates
    (
        "template-unknown-field",
        "generator: {type: template, templates: ['Find {colour}']}\n",
        ("generator", "templates[0]", "{colour}"),
    ),
    (
        "template-second-bad",
        "generator: {type: template, templates: ['{color}', 'a {nope.x}']}\n",
        ("generator", "templates[1]", "{nope}"),
    ),
    (
        "template-attribute",
        "generator: {type: template, templates: ['a {color.x}']}\n",
        ("templates[0]", "{color.x}", "write {color}"),
    ),
    (
        "template-positional",
        "generator: {type: template, templates: ['a {} b']}\n",
        ("templates[0]",),
    ),
    (
        "template-unbalanced",
        "generator: {type: template, templates: ['a {color']}\n",
        ("templates[0]",),
    ),
    ("template-none", "generator: {type: template, templates: []}\n", ("generator.templates",)),
    ("jinja-style-field", LLM + "style-field.j2}\n", ("style-field.j2", "line 1", "nonexistent")),
    ("jinja-misspelt-variable", LLM + "misspelt.j2}\n", ("misspelt.j2", "'contnet'")),
    ("jinja-in-a-branch", LLM + "branch.j2}\n", ("branch.j2", "line 2", "moood")),
    ("jinja-features-item", LLM + "item.j2}\n", ("item.j2", "features.nope")),
    ("jinja-wrong-kind", LLM + "wrong-kind.j2}\n", ("wrong-kind.j2", "content.mood")),
    ("jinja-missing-file", LLM + "nowhere.j2}\n", ("nowhere.j2", "file not found")),
    ("jinja-syntax", LLM + "syntax.j2}\n", ("syntax.j2", "line 1")),
    ("jinja-system", LLM + "good.j2, system: misspelt.j2}\n", ("system", "misspelt.j2")),
]

TEMPLATES = {
    "good.j2": "Ask about {% for k, v in content.items() %}{{ k }} {{ v }} {% endfor %}"
    "{{ style.mood }} {{ features['size'] }} {{ features.get('topic') }}\n",
    "style-field.j2": "Write a request about {{ style.nonexistent }}\n",
    "misspelt.j2": "Write {{ contnet.color }}\n",
    "branch.j2": "{% if features.size == 'huge' %}\n{{ style['moood'] }}{% endif %}\n",
    "item.j2": "{{ features['nope'] }}\n",
    "wrong-kind.j2": "{{ content.mood }}\n",
    "syntax.j2": "{% if %}\n",
    "guarded.j2": "{{ style.mood }}{% if content.trouble is defined %} {{ content.trouble }}"
    "{% endif %}\n",
}
PLUGINS = """
def scored(candidate, test_input, response):
    return {"quality": max(0.0, min(1.0, response.data["quality"]))}


scored.objectives = ("quality",)
"""

# (case, arguments; @name is a path of the workspace, @name/x below it; what the line names)
ARGUMENTS = [
    ("no-command", [], ("COMMAND",)),
    ("unknown-command", ["bogus"], ("invalid choice",)),
    ("unknown-top-flag", ["--bogus", "list"], ("--bogus",)),
    # run
    ("run-missing-file", ["run", "@work/nowhere.yaml"], ("nowhere.yaml", "file not found")),
    ("run-a-folder", ["run", "@empty_dir", "--dry-run"], ("empty_dir", "a folder")),
    ("run-unknown-flag", ["run", "@config", "--bogus"], ("--bogus",)),
    ("run-tests-zero", ["run", "@config", "--tests", "0"], ("--tests",)),
    ("run-tests-negative", ["run", "@config", "--tests", "-5"], ("--tests",)),
    ("run-tests-word", ["run", "@config", "--tests", "many"], ("--tests",)),
    ("run-tests-float", ["run", "@config", "--tests", "1e3"], ("--tests",)),
    ("run-seed-negative", ["run", "@config", "--seed", "-1"], ("seed",)),
    ("run-seed-word", ["run", "@config", "--seed", "abc"], ("--seed",)),
    ("run-seed-huge", ["run", "@config", "--seed", "99999999999999"], ("seed",)),
    ("run-population-zero", ["run", "@config", "--population", "0"], ("population",)),
    ("run-concurrency-zero", ["run", "@config", "--concurrency", "0"], ("concurrency",)),
    ("run-concurrency-huge", ["run", "@config", "--concurrency", "100000"], ("concurrency",)),
    ("run-time-word", ["run", "@config", "--time", "soon"], ("--time",)),
    ("run-time-zero", ["run", "@config", "--time", "0"], ("time",)),
    ("run-max-cost-negative", ["run", "@config", "--max-cost", "-1"], ("--max-cost",)),
    ("run-error-rate-two", ["run", "@config", "--max-error-rate", "2"], ("--max-error-rate",)),
    ("run-error-rate-nan", ["run", "@config", "--max-error-rate", "nan"], ("--max-error-rate",)),
    ("run-show-negative", ["run", "@config", "--show", "-1"], ("--show",)),
    ("run-algorithm-unknown", ["run", "@config", "--algorithm", "nope", "--dry-run"], ("nope",)),
    ("run-sut-word", ["run", "@config", "--sut", "x", "--dry-run"], ("--sut",)),
    ("run-sut-url-no-host", ["run", "@config", "--sut", "http://", "--dry-run"], ("sut.url",)),
    (
        "run-sut-url-port",
        ["run", "@config", "--sut", "http://h:70000/x", "--dry-run"],
        ("sut.url", "port"),
    ),
    ("run-generator-bad", ["run", "@config", "--generator", "nope:x", "--dry-run"], ("generator",)),
    ("run-judge-bad", ["run", "@config", "--judge", "nope:x", "--dry-run"], ("judge",)),
    ("run-set-no-equals", ["run", "@config", "--set", "seed", "--dry-run"], ("--set",)),
    ("run-set-no-key", ["run", "@config", "--set", "=1", "--dry-run"], ("--set",)),
    ("run-set-bad-yaml", ["run", "@config", "--set", "seed=[1", "--dry-run"], ("seed",)),
    ("run-set-unknown", ["run", "@config", "--set", "colour=red", "--dry-run"], ("colour",)),
    ("run-set-through-scalar", ["run", "@config", "--set", "seed.x=1", "--dry-run"], ("seed",)),
    ("run-option-no-equals", ["run", "@config", "--option", "colour", "--dry-run"], ("--option",)),
    ("run-option-unknown", ["run", "@config", "--option", "colour=red", "--dry-run"], ("usecase",)),
    ("run-out-a-file", ["run", "@config", "--out", "@config"], ("not a folder",)),
    ("run-out-proc", ["run", "@config", "--out", "/proc/stellar-runs"], ("/proc",)),
    ("run-resume-missing", ["run", "--resume", "@work/nowhere"], ("nowhere",)),
    ("run-resume-a-file", ["run", "--resume", "@config"], ("config.yaml",)),
    ("run-resume-empty-dir", ["run", "--resume", "@empty_dir"], ("empty_dir", CONFIG_NAME)),
    ("run-resume-new-seed", ["run", "--resume", "@run", "--seed", "3"], ("budgets",)),
    ("run-resume-fewer-tests", ["run", "--resume", "@run", "--tests", "1"], ("--tests 1",)),
    # compare
    ("compare-missing-file", ["compare", "@work/nowhere.yaml"], ("nowhere.yaml",)),
    ("compare-seeds-zero", ["compare", "@config", "--seeds", "0"], ("--seeds",)),
    ("compare-repeats-zero", ["compare", "@config", "--repeats", "0"], ("--repeats",)),
    ("compare-parallel-zero", ["compare", "@config", "--parallel", "0"], ("--parallel",)),
    ("compare-tests-negative", ["compare", "@config", "--tests", "-1"], ("--tests",)),
    (
        "compare-algorithm-unknown",
        ["compare", "@config", "--algorithms", "nope", "--out", "@work/experiment"],
        ("nope",),
    ),
    (
        "compare-embedder-unknown",
        ["compare", "@config", "--embedder", "bogus", "--out", "@work/experiment"],
        ("--embedder",),
    ),
    (
        "compare-time-zero",
        ["compare", "@config", "--time", "0", "--out", "@work/experiment"],
        ("time",),
    ),
    ("compare-unknown-flag", ["compare", "@config", "--bogus"], ("--bogus",)),
    # judge
    ("judge-no-dir", ["judge"], ("RUN_DIR",)),
    ("judge-missing", ["judge", "@work/nowhere"], ("nowhere",)),
    ("judge-a-file", ["judge", "@config"], ("config.yaml",)),
    ("judge-empty-dir", ["judge", "@empty_dir"], ("empty_dir",)),
    ("judge-concurrency-zero", ["judge", "@run", "--concurrency", "0"], ("concurrency",)),
    ("judge-show-negative", ["judge", "@run", "--show", "-1"], ("--show",)),
    ("judge-judge-bad", ["judge", "@run", "--judge", "nope:x"], ("judge",)),
    ("judge-unknown-flag", ["judge", "@run", "--bogus"], ("--bogus",)),
    # replay
    ("replay-missing", ["replay", "@work/nowhere.jsonl"], ("nowhere.jsonl",)),
    ("replay-empty-dir", ["replay", "@empty_dir"], ("empty_dir",)),
    ("replay-repeat-zero", ["replay", "@run", "--repeat", "0"], ("--repeat",)),
    ("replay-only-bogus", ["replay", "@run", "--only", "bogus"], ("--only",)),
    (
        "replay-config-missing",
        ["replay", "@suite", "--config", "@work/nowhere.yaml"],
        ("nowhere.yaml",),
    ),
    ("replay-failure-rate", ["replay", "@run", "--max-failure-rate", "2"], ("--max-failure-rate",)),
    ("replay-max-failures", ["replay", "@run", "--max-failures", "-1"], ("--max-failures",)),
    ("replay-error-rate", ["replay", "@run", "--max-error-rate", "-0.5"], ("--max-error-rate",)),
    ("replay-sut-word", ["replay", "@run", "--sut", "x"], ("--sut",)),
    ("replay-set-unknown", ["replay", "@run", "--set", "colour=red"], ("colour",)),
    (
        "run-http-body-without-input",
        [
            "run",
            "@config",
            "--sut",
            "http://127.0.0.1:9/a",
            "--set",
            "sut.body={text: '{{inptu}}'}",
        ],
        ("sut.body", "{{input}}"),
    ),
    ("run-junit-unwritable", ["run", "@config", "--junit", "/proc/x.xml"], ("--junit",)),
    ("replay-junit-unwritable", ["replay", "@run", "--junit", "/proc/x.xml"], ("--junit",)),
    ("run-sut-ftp", ["run", "@config", "--sut", "ftp://127.0.0.1/q"], ("--sut", "http")),
    (
        "run-flag-and-set-same",
        ["run", "@config", "--tests", "3", "--set", "budget.tests=5", "--dry-run"],
        ("budget.tests", "give one"),
    ),
    (
        "run-set-replaces-flag",
        ["run", "@config", "--tests", "3", "--set", "budget={}", "--dry-run"],
        ("budget", "give one"),
    ),
    (
        "run-set-no-threshold",
        ["run", "@config", "--set", "oracle.below={}", "--dry-run"],
        ("oracle", "at least one threshold"),
    ),
    # report
    ("report-missing", ["report", "@work/nowhere"], ("nowhere",)),
    ("report-empty-dir", ["report", "@empty_dir"], ("empty_dir",)),
    ("report-out-a-folder", ["report", "@run", "-o", "@empty_dir"], ("-o",)),
    ("report-embedder-unknown", ["report", "@run", "--embedder", "bogus"], ("--embedder",)),
    # calibrate
    ("calibrate-unknown-use-case", ["calibrate", "nowhere_at_all"], ("nowhere_at_all",)),
    ("calibrate-no-labels", ["calibrate", str(TOY)], ("calibration",)),
    (
        "calibrate-labels-missing",
        ["calibrate", "navi", "--labels", "@work/nowhere.jsonl"],
        ("nowhere.jsonl",),
    ),
    ("calibrate-labels-not-json", ["calibrate", "navi", "--labels", "@config"], ("config.yaml",)),
    ("calibrate-labels-empty", ["calibrate", "navi", "--labels", "@empty_file"], ("empty_file",)),
    ("calibrate-concurrency-zero", ["calibrate", "navi", "--concurrency", "0"], ("concurrency",)),
    ("calibrate-judge-bad", ["calibrate", "navi", "--judge", "nope:x"], ("judge",)),
    # list, serve, export-data, export
    ("list-unknown-kind", ["list", "gadgets"], ("gadgets",)),
    ("list-two-kinds", ["list", "sut", "fitness"], ("fitness",)),
    ("serve-unknown-use-case", ["serve", "nowhere_at_all"], ("nowhere_at_all",)),
    ("serve-port-negative", ["serve", "navi", "--port", "-1"], ("--port",)),
    ("serve-port-huge", ["serve", "navi", "--port", "70000"], ("--port",)),
    ("serve-port-word", ["serve", "navi", "--port", "http"], ("--port",)),
    ("serve-nothing-to-serve", ["serve", str(TOY)], ("serve",)),
    ("serve-option-unknown", ["serve", "navi", "--option", "nope=1", "--port", "0"], ("nope",)),
    ("export-data-unknown", ["export-data", "nowhere_at_all", "@work/x.json"], ("nowhere_at_all",)),
    ("export-data-nothing", ["export-data", str(TOY), "@work/x.json"], ("export",)),
    ("export-data-to-a-folder", ["export-data", "navi", "@empty_dir"], ("empty_dir",)),
    ("export-missing", ["export", "@work/nowhere"], ("nowhere",)),
    ("export-a-file", ["export", "@config"], ("config.yaml",)),
    ("export-empty-dir", ["export", "@empty_dir"], ("empty_dir",)),
    ("export-out-a-file", ["export", "@run", "--out", "@config"], ("--out",)),
]

# archives: (case, how the archive is spoiled); every one is given to every command below
ARCHIVES = [
    "zero-bytes",
    "text",
    "random-bytes",
    "truncated",
    "header-only",
    "foreign-table",
    "no-tables",
    "meta-only",
    "wrong-columns",
    "no-meta",
    "wrong-verdicts",
    "a-folder",
    "bad-json-row",
    "bad-status-row",
    "damaged-pages",
]
READERS = {
    "resume": ["run", "--resume"],
    "judge": ["judge"],
    "export": ["export"],
    "report": ["report"],
    "replay": ["replay", "--only", "all"],
}

GOOD_LINE = {  # an input the toy system answers well: replayed, it passes
    "input": "I politely want a tiny green circle about art, feeling calm",
    "candidate": {
        "color": "green",
        "shape": "circle",
        "size": "tiny",
        "mood": "calm",
        "politeness": "polite",
        "topic": "art",
        "noise": "none",
    },
}
# (case, the suite file's bytes, what the line names)
SUITES = [
    ("binary", b"\x00\xff\xfe\x01", ("binary.jsonl",)),
    ("latin-1", '{"input": "caf\xe9"}\n'.encode("latin-1"), ("latin-1.jsonl",)),
    ("truncated-json", b'{"input": "x"', ("truncated-json.jsonl", "line 1", "not JSON")),
    ("an-array", b"[1, 2]\n", ("an-array.jsonl", "JSON object")),
    ("null", b"null\n", ("null.jsonl", "JSON object")),
    ("a-string", b'"text"\n', ("a-string.jsonl", "JSON object")),
    ("no-input", b'{"candidate": {}}\n', ("no-input.jsonl", "'input'")),
    ("empty-input", b'{"input": " ", "candidate": {}}\n', ("empty-input.jsonl", "'input'")),
    ("input-number", b'{"input": 5, "candidate": {}}\n', ("input-number.jsonl", "'input'")),
    ("no-candidate", b'{"input": "x"}\n', ("no-candidate.jsonl", "'candidate'")),
    ("candidate-list", b'{"input": "x", "candidate": [1]}\n', ("candidate-list.jsonl",)),
    ("failed-text", b'{"input": "x", "candidate": {}, "failed": "yes"}\n', ("'failed'",)),
    ("vector-text", b'{"input": "x", "candidate": {}, "vector": ["a"]}\n', ("'vector'",)),
    ("config-number", b'{"input": "x", "candidate": {}, "config": 5}\n', ("'config'",)),
    (
        "second-line-bad",
        json.dumps(GOOD_LINE).encode() + b"\n{oops\n",
        ("second-line-bad.jsonl", "line 2"),
    ),
    ("deeply-nested", b"[" * 100_000 + b"]" * 100_000 + b"\n", ("deeply-nested.jsonl",)),
    (
        "unknown-feature",
        json.dumps({**GOOD_LINE, "candidate": {"colour": "red"}}).encode(),
        ("test 1", "colour"),
    ),
    (
        "unknown-value",
        json.dumps(
            {**GOOD_LINE, "candidate": {**GOOD_LINE["candidate"], "color": "purple"}}
        ).encode(),
        ("test 1", "'purple'", "color"),
    ),
]

# valid input that must succeed: (case, arguments)
CONTROLS = [
    ("run-dry-run", ["run", "@config", "--dry-run"]),
    ("run-template-generator", ["run", "@work/template-good.yaml", "--dry-run"]),
    ("run-llm-generator", ["run", "@work/llm-good.yaml", "--dry-run"]),
    # a template shared with a space that has the feature guards it: not an error
    ("run-llm-guarded-field", ["run", "@work/llm-guarded.yaml", "--dry-run"]),
    ("run-http-sut", ["run", "@work/http-good.yaml", "--dry-run"]),
    ("run-http-conversation", ["run", "@work/http-conversation.yaml", "--dry-run"]),
    ("run-declared-scores", ["run", "@work/declared-good.yaml", "--dry-run"]),
    ("run-navi", ["run", "navi", "--dry-run"]),
    ("run-sut-url", ["run", "@config", "--sut", "http://[::1]:8080/answer", "--dry-run"]),
    ("export", ["export", "@run", "--out", "@work/exported"]),
    ("export-suite", ["export", "@run", "--suite", "@work/exported.jsonl"]),
    ("judge", ["judge", "@run", "--quiet"]),
    (
        "replay-suite",
        ["replay", "@suite", "--config", "@config", "--out", "@work/replays", "--quiet"],
    ),
    ("list", ["list"]),
    ("list-kind", ["list", "fitness"]),
]


# ---------------------------------------------------------------------------------- workspace


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> dict[str, Path]:
    """The files the cases name: configurations, templates, a run, spoiled archives."""
    root = tmp_path_factory.mktemp("bad_input")
    (root / "suite_plugins.py").write_text(PLUGINS, encoding="utf-8")
    for name, text in TEMPLATES.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "invalid.schema.json").write_text('{"type": 5}', encoding="utf-8")
    controls = {
        "template-good.yaml": "generator: {type: template, templates: ['{color} {shape}?']}\n",
        "llm-good.yaml": LLM + "good.j2}\n",
        "llm-guarded.yaml": LLM + "guarded.j2}\n",
        "http-good.yaml": "sut: {type: http, url: 'https://user@example.com:8443/a?b=c'}\n",
        "http-conversation.yaml": "sut: {type: http, url: 'http://localhost:9/chat', "
        "body: {session: '{{session_id}}', text: '{{input}}'}, conversation: {state: session, "
        "reset: {url: 'http://localhost:9/chat/{{session_id}}'}}}\n",
        "declared-good.yaml": "fitness: {target: 'suite_plugins:scored', objectives: [quality]}\n",
    }
    for name, extra in controls.items():
        (root / name).write_text(BASE + extra, encoding="utf-8")
    config = root / "config.yaml"
    config.write_text(BASE + "budget: {tests: 8}\n" + POST + "\n", encoding="utf-8")
    result = cli("run", config, "--out", root / "runs", "--quiet")
    assert result.returncode == 0, result.stderr
    (run,) = (root / "runs").iterdir()
    suite = root / "suite.jsonl"
    suite.write_text(json.dumps(GOOD_LINE) + "\n", encoding="utf-8")
    (root / "empty_dir").mkdir()
    (root / "empty_file").write_text("", encoding="utf-8")
    return {
        "work": root,
        "config": config,
        "run": run,
        "suite": suite,
        "empty_dir": root / "empty_dir",
        "empty_file": root / "empty_file",
    }


def expand(args: list[str], work: dict[str, Path]) -> list[str]:
    """``@name`` and ``@name/below`` as paths of the workspace."""
    out = []
    for arg in args:
        if arg.startswith("@"):
            key, _, below = arg[1:].partition("/")
            arg = str(work[key] / below if below else work[key])
        out.append(arg)
    return out


def refused(args: list[object], *names: str) -> str:
    """The command ends with exit 2 and one error line naming every one of ``names``."""
    assert names, "a case must say what its line names"
    result = cli(*args)
    err = LEFT_BEHIND.sub("", result.stderr)
    assert "Traceback" not in err, err
    assert result.returncode == 2, (result.returncode, err, result.stdout[-500:])
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stellar: error: "), err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# ------------------------------------------------------------------------------------- cases


@pytest.mark.parametrize(("case", "content", "names"), FILES, ids=[c[0] for c in FILES])
def test_a_bad_configuration_file(work, case, content, names):
    path = work["work"] / f"{case}.yaml"
    path.write_bytes(content)
    refused(["run", path, "--dry-run"], *names)


@pytest.mark.parametrize(("case", "extra", "names"), SETTINGS, ids=[c[0] for c in SETTINGS])
def test_a_bad_setting(work, case, extra, names):
    path = work["work"] / f"{case}.yaml"
    path.write_text(BASE + extra, encoding="utf-8")
    out = work["work"] / "runs-never"
    refused(
        ["run", path, "--dry-run", "--out", out]
        if "out:" not in extra
        else ["run", path, "--dry-run"],
        *names,
    )
    assert not out.exists()


@pytest.mark.parametrize(("case", "args", "names"), ARGUMENTS, ids=[c[0] for c in ARGUMENTS])
def test_a_bad_argument(work, case, args, names):
    refused(expand(args, work), *names)
    assert not (work["work"] / "experiment").exists()


def spoil(archive: Path, how: str) -> None:
    """Replace a copied run's archive with a damaged or foreign one."""
    data = archive.read_bytes()
    archive.unlink()
    if how == "zero-bytes":
        archive.write_bytes(b"")
    elif how == "text":
        archive.write_text("tests,failures\n1,0\n")
    elif how == "random-bytes":
        archive.write_bytes(bytes(range(256)) * 40)
    elif how == "truncated":
        archive.write_bytes(data[: len(data) // 2])
    elif how == "header-only":
        archive.write_bytes(data[:100])
    elif how == "a-folder":
        archive.mkdir()
    elif how == "damaged-pages":  # every page but the first, which lists the tables
        page = int.from_bytes(data[16:18], "big")
        archive.write_bytes(data[:page] + b"\xab" * (len(data) - page))
    else:
        archive.write_bytes(data)
        with sqlite3.connect(archive) as db:
            db.executescript(SPOILERS[how])
        db.close()


SPOILERS = {
    "foreign-table": "DROP VIEW failures; DROP TABLE verdicts; DROP TABLE tests; DROP TABLE meta;"
    "CREATE TABLE people (name TEXT);",
    "no-tables": "DROP VIEW failures; DROP TABLE verdicts; DROP TABLE tests; DROP TABLE meta;",
    "meta-only": "DROP VIEW failures; DROP TABLE verdicts; DROP TABLE tests;",
    "wrong-columns": "DROP VIEW failures; DROP TABLE verdicts; DROP TABLE tests;"
    "CREATE TABLE tests (id INTEGER PRIMARY KEY, text TEXT);",
    "no-meta": "DROP TABLE meta;",
    "wrong-verdicts": "DROP VIEW failures; DROP TABLE verdicts; CREATE TABLE verdicts (x);",
    "bad-json-row": "UPDATE tests SET scores = '{not json' WHERE id = 1;",
    "bad-status-row": "UPDATE tests SET status = 'exploded' WHERE id = 1;",
}


@pytest.fixture(scope="module")
def spoiled(work) -> dict[str, Path]:
    """A copy of the run per way of spoiling its archive (its summary names the copy)."""
    found = {}
    for how in ARCHIVES:
        copy = work["work"] / "spoiled" / how
        shutil.copytree(work["run"], copy)
        for name in (f"{ARCHIVE_NAME}-wal", f"{ARCHIVE_NAME}-shm"):
            (copy / name).unlink(missing_ok=True)
        spoil(copy / ARCHIVE_NAME, how)
        found[how] = copy
    return found


def files(folder: Path) -> list[str]:
    """What is in ``folder``, but SQLite's own files beside an archive it opened."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))


# a row or page that cannot be read is found as it is read: `judge` has printed its header
ROW_LEVEL = {"bad-json-row", "bad-status-row", "damaged-pages"}
SPOILED = [
    (how, command)
    for how in ARCHIVES
    for command in READERS
    if not (command == "judge" and how in ROW_LEVEL)
]


@pytest.mark.parametrize(("how", "command"), SPOILED, ids=[f"{h}-{c}" for h, c in SPOILED])
def test_a_spoiled_archive(spoiled, tmp_path, how, command):
    run_dir = tmp_path / how
    shutil.copytree(spoiled[how], run_dir, symlinks=True)
    summary = json.loads((run_dir / SUMMARY_NAME).read_text(encoding="utf-8"))
    summary["run_dir"] = str(run_dir)  # not a moved run: its summary names this folder
    (run_dir / SUMMARY_NAME).write_text(json.dumps(summary), encoding="utf-8")
    before = files(run_dir)
    refused([*READERS[command], run_dir], f"{run_dir.name}/{ARCHIVE_NAME}")
    assert files(run_dir) == before  # nothing written beside it


@pytest.mark.parametrize(("case", "content", "names"), SUITES, ids=[c[0] for c in SUITES])
def test_a_bad_suite_file(work, case, content, names):
    path = work["work"] / f"{case}.jsonl"
    path.write_bytes(content)
    refused(["replay", path, "--config", work["config"], "--out", work["work"] / "replays"], *names)


@pytest.mark.parametrize(("case", "args"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_valid_input_succeeds(work, case, args):
    result = cli(*expand(args, work))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error" not in result.stderr.lower()


def test_the_suite_is_large_enough():
    cases = len(FILES) + len(SETTINGS) + len(ARGUMENTS) + len(SPOILED)
    assert cases + len(SUITES) >= 150 and len(CONTROLS) >= 10
