"use strict";
// STELLAR's report page. Every text from the data goes in as a text node (never as markup),
// and only links and images this file checks are set as attributes.
(() => {
  const D = JSON.parse(document.getElementById("data").textContent);
  const main = document.getElementById("main");
  const nav = document.getElementById("nav");
  const SVG_NS = "http://www.w3.org/2000/svg"; // a name, not an address: nothing is fetched
  const SAFE_URL = /^(#[\w-]+|[\w.\/%-]+\.html|data:image\/svg\+xml;base64,[A-Za-z0-9+\/=]+)$/;
  const PAGE = 100; // table rows drawn at a time
  const MODES = 20; // failure modes listed before 'show the other ...'
  const SUPPORT = 3; // verdicts at which a heat-map cell shows half its rate's colour

  // --- building blocks --------------------------------------------------------------------
  function add(node, kids) {
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.appendChild(typeof kid === "object" ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  function attrs(node, values) {
    for (const [key, value] of Object.entries(values || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (/^on/i.test(key)) continue; // handlers only through addEventListener
      if ((key === "href" || key === "src") && !SAFE_URL.test(value)) continue;
      node.setAttribute(key, String(value));
    }
    return node;
  }

  function h(tag, values, ...kids) {
    return add(attrs(document.createElement(tag), values), kids);
  }

  function s(tag, values, ...kids) {
    return add(attrs(document.createElementNS(SVG_NS, tag), values), kids);
  }

  const num = (n) => Number(n).toLocaleString("en-US");
  const pct = (x, digits = 1) => `${(100 * x).toFixed(digits)}%`;
  const muted = (text) => h("p", { class: "muted" }, text);

  function section(id, title, ...kids) {
    nav.appendChild(h("a", { href: `#${id}` }, title));
    return h("section", { id }, h("h2", null, title), kids);
  }

  function select(id, labels, values, selected) {
    const node = h("select", { id });
    labels.forEach((label, i) => node.appendChild(h("option", { value: String(values[i]) }, label)));
    node.value = String(values[selected]);
    return node;
  }

  function table(id, data, linkColumn = -1) {
    return h(
      "table",
      { id, class: "data" },
      h("thead", null, h("tr", null, data.header.map((c) => h("th", null, c)))),
      h(
        "tbody",
        null,
        data.rows.map((row) =>
          h(
            "tr",
            null,
            row.map((cell, c) =>
              h("td", null, c === linkColumn && cell ? h("a", { href: cell }, "open") : cell),
            ),
          ),
        ),
      ),
    );
  }

  // --- sections shared by runs and experiments --------------------------------------------
  function summary() {
    return section(
      "summary",
      "Summary",
      D.notes.map((note) => h("p", { class: "note" }, note)),
      h(
        "dl",
        { class: "cards" },
        D.summary.map(([key, value, meaning]) =>
          h(
            "div",
            { class: value.length > 20 ? "card wide" : "card" },
            h("dt", null, key),
            h("dd", null, value),
            meaning ? h("dd", { class: "meaning" }, meaning) : null,
          ),
        ),
      ),
    );
  }

  // a person's marks of the verdicts (stellar review), when the run has any
  const MARK_WORDS = { real: "real", false_alarm: "false alarm", unsure: "unsure" };
  function review() {
    const R = D.review;
    if (!R) return null;
    return section(
      "review",
      "Review",
      muted(
        `${num(R.marked)} of ${num(R.verdicts)} verdicts marked by a person (stellar review). A failure marked a ` +
          "false alarm is excluded from the counts above (reason: reviewed: false alarm); the tests table marks " +
          `each reviewed test. ${R.file} is a label file: stellar calibrate USECASE --labels ${R.file} measures the judges.`,
      ),
      h(
        "dl",
        { class: "cards", id: "review-counts" },
        R.counts.map(([mark, n]) => h("div", { class: "card" }, h("dt", null, MARK_WORDS[mark] || mark), h("dd", null, num(n)))),
      ),
      h("p", { class: "rule", id: "review-precision" }, R.precision),
    );
  }

  // when a test fails, and what each score means
  function reading() {
    const R = D.reading;
    return section(
      "reading",
      "How to read this report",
      R.rules.map((rule) => h("p", { class: "rule" }, rule)),
      h(
        "table",
        { id: "scores", class: "data" },
        h("thead", null, h("tr", null, h("th", null, "score"), h("th", null, "what it means"))),
        h("tbody", null, R.scores.map(([name, meaning]) => h("tr", null, h("th", null, name), h("td", null, meaning)))),
      ),
      muted("Scores run from 0 to 1; lower is worse. Tests in the table below carry their scores and the judge's reason."),
    );
  }

  function field(name, text) {
    return h("div", { class: "field" }, h("span", { class: "key" }, name), h("div", { class: "text" }, text));
  }

  function mode(m, i) {
    return h(
      "details",
      { class: "mode", open: i < 3 ? "" : null },
      h(
        "summary",
        null,
        h("span", { class: "rank" }, `#${i + 1}`),
        h("span", { class: "label" }, m.label),
        h("span", { class: "size" }, `${num(m.size)} (${pct(m.share)})`),
      ),
      m.found_by ? muted(`found by ${m.found_by}`) : null,
      m.examples.map((e) =>
        h(
          "div",
          { class: "example" },
          field("input", e.input),
          field("answer", e.answer),
          e.scores ? field("scores", e.scores) : null,
          e.reason ? field("judge", e.reason) : null,
        ),
      ),
    );
  }

  function modes() {
    if (!D.modes.length) return section("modes", "Failure modes", muted("No failures found."));
    const total = D.modes.reduce((sum, m) => sum + m.size, 0);
    const list = h("div", { id: "mode-list" }, D.modes.slice(0, MODES).map(mode));
    const more = D.modes.length - MODES;
    const button =
      more > 0 ? h("button", { id: "more-modes", type: "button" }, `show the other ${num(more)} modes`) : null;
    if (button) {
      button.addEventListener("click", () => {
        add(list, D.modes.slice(MODES).map((m, i) => mode(m, MODES + i)));
        button.remove();
      });
    }
    return section(
      "modes",
      "Failure modes",
      muted(
        `${num(D.modes.length)} mode${D.modes.length === 1 ? "" : "s"} among ${num(total)} distinct failing ` +
          "inputs: failing answers grouped by the objectives that failed and by their meaning, largest " +
          "first. Each is titled by the objectives that failed and the opening of its most typical answer, " +
          "with the examples nearest its centre.",
      ),
      list,
      button,
    );
  }

  // where the failures lie: rules over feature values, each checked on held-back tests
  function rules() {
    const title = "Failure conditions";
    if (!D.modes.length) return section("rules", title, muted("No failures found."));
    const checked = muted(D.rules_checked);
    if (!D.rules.length) {
      return section("rules", title, muted("No rule over the feature values held on the held-back tests."), checked);
    }
    const rows = D.rules.map((r) => [
      r.rule,
      num(r.tests),
      num(r.failed),
      pct(r.precision, 0),
      `${num(r.held_back_failed)} of ${num(r.held_back_tests)}`,
      pct(r.held_back_precision, 0),
      r.modes.map(([m, n]) => `#${m} (${num(n)})`).join(", "),
    ]);
    const header = ["rule", "tests", "failed", "precision", "held back", "held-back precision", "modes (failures)"];
    return section(
      "rules",
      title,
      muted(
        "Rules over the feature values under which the run's tests failed, most failures first " +
          "(f=v: the feature has that value; f!=v: any other). Tests: the verdicts the rule matches; " +
          "precision: the share of them that failed; modes: the failure modes above its failures fall in. " +
          "The counts are this run's tests, which an adaptive search does not draw evenly: a rule says " +
          "where the failures lie, not how often users would meet them.",
      ),
      h("div", { class: "scroll" }, table("rules-table", { header, rows })),
      checked,
    );
  }

  // --- a run ------------------------------------------------------------------------------
  const T = D.tests;
  const N = T ? T.id.length : 0;
  const judged = new Uint8Array(N); // a verdict: pass or failure (summary.json's "verdicts")
  const failed = new Uint8Array(N);
  if (T) {
    const failure = D.verdicts.indexOf("failure");
    const pass = D.verdicts.indexOf("pass");
    for (let i = 0; i < N; i++) {
      failed[i] = T.verdict[i] === failure ? 1 : 0;
      judged[i] = failed[i] || T.verdict[i] === pass ? 1 : 0;
    }
  }

  // verdicts and failures per value of feature ``x`` (and of feature ``y``)
  function tally(x, y) {
    const nx = D.features[x].values.length;
    const ny = y === undefined ? 1 : D.features[y].values.length;
    const tests = Array.from({ length: ny }, () => new Array(nx).fill(0));
    const fails = Array.from({ length: ny }, () => new Array(nx).fill(0));
    for (let i = 0; i < N; i++) {
      if (!judged[i]) continue;
      const a = T.values[i][x];
      const b = y === undefined ? 0 : T.values[i][y];
      if (a < 0 || b < 0) continue;
      tests[b][a]++;
      fails[b][a] += failed[i];
    }
    return { tests, fails };
  }

  function featureRates() {
    if (!D.features.length) return section("features", "Failure rate per feature value", muted("No features."));
    return section(
      "features",
      "Failure rate per feature value",
      muted("Failure rate of the tests with that value: failures / verdicts (excluded tests and errors left out)."),
      h(
        "div",
        { class: "grid" },
        D.features.map((feature, x) => {
          const { tests, fails } = tally(x);
          return h(
            "table",
            { class: "rates" },
            h("caption", null, feature.name),
            h(
              "tbody",
              null,
              feature.values.map((value, v) => {
                const n = tests[0][v];
                const f = fails[0][v];
                const bar = h("span");
                bar.style.width = pct(n ? f / n : 0);
                return h(
                  "tr",
                  null,
                  h("th", null, value),
                  h("td", { class: "bar" }, bar),
                  h("td", { class: "num" }, n ? pct(f / n, 0) : "–"),
                  h("td", { class: "num muted" }, `${num(f)}/${num(n)}`),
                );
              }),
            ),
          );
        }),
      ),
    );
  }

  function heatmap() {
    const F = D.features;
    if (F.length < 2) return section("heatmap", "Heat map", muted("A heat map needs two features."));
    const names = F.map((f) => f.name);
    const indices = F.map((_, i) => i);
    const columns = select("heat-x", names, indices, 0);
    const rows = select("heat-y", names, indices, 1);
    const out = h("div", { class: "scroll" });
    const draw = () => out.replaceChildren(heatTable(Number(columns.value), Number(rows.value)));
    columns.addEventListener("change", draw);
    rows.addEventListener("change", draw);
    draw();
    return section(
      "heatmap",
      "Heat map",
      muted(
        "Failure rate in each cell of two features: failures / verdicts, shown under the rate. " +
          "A cell is paler the fewer verdicts it holds: with one test it stays faint whatever its rate.",
      ),
      h("div", { class: "controls" }, h("label", null, "columns ", columns), h("label", null, "rows ", rows)),
      out,
    );
  }

  function heatTable(x, y) {
    const X = D.features[x].values;
    const Y = D.features[y].values;
    const { tests, fails } = tally(x, y);
    return h(
      "table",
      { id: "heat", class: "heat" },
      h(
        "thead",
        null,
        h("tr", null, h("th", { class: "corner" }, `${D.features[y].name} \\ ${D.features[x].name}`), X.map((v) => h("th", null, v))),
      ),
      h(
        "tbody",
        null,
        Y.map((yv, r) =>
          h(
            "tr",
            null,
            h("th", null, yv),
            X.map((xv, c) => {
              const n = tests[r][c];
              const f = fails[r][c];
              const title = `${D.features[y].name} = ${yv}, ${D.features[x].name} = ${xv}: ${f} of ${n} verdicts failed`;
              const td = h(
                "td",
                { class: n ? "cell" : "cell empty", "data-tests": n, "data-failures": f, title },
                n ? [h("b", null, pct(f / n, 0)), h("small", null, `${f}/${n}`)] : "–",
              );
              if (n) {
                const alpha = heat(f, n);
                td.style.backgroundColor = `rgba(198, 40, 40, ${alpha.toFixed(3)})`;
                if (alpha > 0.5) td.classList.add("dark");
              }
              return td;
            }),
          ),
        ),
      ),
    );
  }

  // a cell's red: its failure rate, weighed by how many verdicts back it (1 test: a quarter)
  function heat(failures, tests) {
    const support = tests / (tests + SUPPORT);
    return 0.04 + 0.9 * (failures / tests) * support;
  }

  function ticks(top, integer) {
    const rough = Math.max(top, integer ? 1 : 1e-9) / 5;
    const power = 10 ** Math.floor(Math.log10(rough));
    let step = [1, 2, 5, 10].map((m) => m * power).find((m) => m >= rough);
    if (integer) step = Math.max(1, step);
    const max = Math.max(step, Math.ceil(top / step) * step);
    const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    const values = [];
    for (let k = 0; k * step <= max + step / 2; k++) values.push(k * step);
    return { max, values, digits };
  }

  function linePlot(id, xs, ys, xLabel, yLabel, integerX) {
    const W = 520, H = 280, L = 66, R = 30, TOP = 14, B = 46;
    const tx = ticks(xs.length ? xs[xs.length - 1] : 0, integerX);
    const ty = ticks(ys.reduce((a, b) => Math.max(a, b), 0), true);
    const X = (v) => L + ((W - L - R) * v) / tx.max;
    const Y = (v) => H - B - ((H - TOP - B) * v) / ty.max;
    const label = (digits) => (v) => (digits ? v.toFixed(digits) : num(Math.round(v)));
    const labelX = label(tx.digits);
    const labelY = label(ty.digits);
    const points = [];
    let last = 0;
    xs.forEach((x, i) => {
      points.push(`${X(x).toFixed(1)},${Y(last).toFixed(1)}`, `${X(x).toFixed(1)},${Y(ys[i]).toFixed(1)}`);
      last = ys[i];
    });
    return s(
      "svg",
      { id, class: "plot", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${yLabel} over ${xLabel}` },
      ty.values.map((v) => [
        s("line", { class: "grid", x1: L, x2: W - R, y1: Y(v), y2: Y(v) }),
        s("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end" }, labelY(v)),
      ]),
      tx.values.map((v) => s("text", { x: X(v), y: H - B + 16, "text-anchor": "middle" }, labelX(v))),
      s("line", { class: "axis", x1: L, x2: W - R, y1: Y(0), y2: Y(0) }),
      s("line", { class: "axis", x1: L, x2: L, y1: TOP, y2: Y(0) }),
      s("polyline", { class: "curve", points: points.join(" ") }),
      s("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", class: "axis-label" }, xLabel),
      s("text", { x: 14, y: (TOP + H - B) / 2, "text-anchor": "middle", class: "axis-label", transform: `rotate(-90 14 ${(TOP + H - B) / 2})` }, yLabel),
    );
  }

  function curves() {
    const c = D.curve;
    if (!c.tests.length) return section("curves", "Failures over tests and time", muted("No executed tests."));
    const end = c.seconds[c.seconds.length - 1];
    const [unit, scale] = end > 7200 ? ["hours", 3600] : end > 600 ? ["minutes", 60] : ["seconds", 1];
    return section(
      "curves",
      "Failures over tests and time",
      muted("Distinct failing inputs found, after each executed test and over the run's time."),
      h(
        "div",
        { class: "plots" },
        h("figure", null, linePlot("curve-tests", c.tests, c.failures, "tests", "unique failures", true)),
        h("figure", null, linePlot("curve-time", c.seconds.map((v) => v / scale), c.failures, unit, "unique failures", false)),
      ),
    );
  }

  function testsTable() {
    const VERDICT_CLASS = ["fail", "pass", "excluded", "none"];
    const count = (column, k) => T[column].reduce((n, v) => n + (v === k), 0);
    const status = select(
      "f-status",
      ["any status", ...D.statuses.map((name, k) => `${name} (${num(count("status", k))})`)],
      ["", ...D.statuses.map((_, k) => k)],
      0,
    );
    const verdict = select(
      "f-verdict",
      ["any verdict", ...D.verdicts.map((name, k) => `${name} (${num(count("verdict", k))})`)],
      ["", ...D.verdicts.map((_, k) => k)],
      0,
    );
    const features = D.features.map((f, x) =>
      select(`f-feature-${x}`, [`${f.name}: any`, ...f.values], ["", ...f.values.map((_, v) => v)], 0),
    );
    const search = h("input", { id: "f-search", type: "search", placeholder: "search inputs, answers, scores, judges" });
    const counter = h("span", { id: "count", class: "count" });
    const where = h("span", { id: "page", class: "muted" });
    const prev = h("button", { id: "prev", type: "button" }, "‹ previous");
    const next = h("button", { id: "next", type: "button" }, "next ›");
    const rows = h("tbody", { id: "rows" });
    let shown = [];
    let page = 0;
    let haystack = null; // lower-cased text of each test, made on the first search

    function apply() {
      const st = status.value === "" ? -1 : Number(status.value);
      const vd = verdict.value === "" ? -1 : Number(verdict.value);
      const wanted = features.map((node, x) => [x, node.value === "" ? -1 : Number(node.value)]).filter(([, v]) => v >= 0);
      const query = search.value.trim().toLowerCase();
      if (query && !haystack) {
        haystack = T.input.map((text, i) =>
          [text, T.answer[i], T.scores[i], T.reason[i], T.values[i].map((v, x) => D.features[x].values[v]).join(" ")]
            .join("\n")
            .toLowerCase(),
        );
      }
      const out = [];
      outer: for (let i = 0; i < N; i++) {
        if (st >= 0 && T.status[i] !== st) continue;
        if (vd >= 0 && T.verdict[i] !== vd) continue;
        const values = T.values[i];
        for (const [x, v] of wanted) if (values[x] !== v) continue outer;
        if (query && !haystack[i].includes(query)) continue;
        out.push(i);
      }
      shown = out;
      page = 0;
      draw();
    }

    function row(i) {
      const values = D.features.map((f, x) => {
        const v = T.values[i][x];
        return h("span", { class: "fv" }, `${f.name} = ${v < 0 ? "?" : f.values[v]}`);
      });
      return h(
        "tr",
        { class: `v-${VERDICT_CLASS[T.verdict[i]]}` },
        h("td", { class: "num" }, T.id[i]),
        h("td", { class: "num" }, T.gen[i]),
        h("td", null, h("span", { class: `badge s-${D.statuses[T.status[i]]}` }, D.statuses[T.status[i]])),
        h(
          "td",
          null,
          h("span", { class: `badge v-${VERDICT_CLASS[T.verdict[i]]}` }, D.verdicts[T.verdict[i]]),
          T.review && T.review[i] >= 0 ? h("span", { class: "badge reviewed" }, `reviewed: ${MARK_WORDS[D.review.counts[T.review[i]][0]]}`) : null,
        ),
        h("td", null, h("div", { class: "clip" }, T.input[i])),
        h("td", null, h("div", { class: "clip" }, T.answer[i])),
        h("td", null, h("div", { class: "clip" }, T.scores[i], T.reason[i] ? h("div", { class: "reason" }, T.reason[i]) : null)),
        h("td", null, h("div", { class: "clip values" }, values)),
      );
    }

    function draw() {
      const start = page * PAGE;
      const end = Math.min(shown.length, start + PAGE);
      const fragment = document.createDocumentFragment();
      for (let k = start; k < end; k++) fragment.appendChild(row(shown[k]));
      rows.replaceChildren(fragment);
      counter.textContent = `${num(shown.length)} of ${num(N)} inputs`;
      where.textContent = shown.length ? `rows ${num(start + 1)}–${num(end)}` : "no test matches";
      prev.disabled = page === 0;
      next.disabled = end >= shown.length;
    }

    for (const node of [status, verdict, ...features]) node.addEventListener("change", apply);
    search.addEventListener("input", apply);
    prev.addEventListener("click", () => { page -= 1; draw(); });
    next.addEventListener("click", () => { page += 1; draw(); });
    rows.addEventListener("click", (event) => {
      const tr = event.target.closest("tr");
      if (tr) tr.classList.toggle("open");
    });
    apply();
    return section(
      "tests",
      "Tests",
      muted(
        `Every input of the run: ${num(D.counts.archived)} archived, of which ${num(D.counts.tests)} were sent to ` +
          `the system under test (the tests) and ${num(D.counts.duplicates)} duplicates and ${num(D.counts.invalid)} ` +
          "invalid inputs were discarded before sending. Click a row to see it whole " +
          `(texts are cut at ${num(D.limit)} characters here; stellar export writes them all).`,
      ),
      h("div", { class: "controls" }, status, verdict, features, search),
      h("div", { class: "pager" }, counter, where, prev, next),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { id: "tests-table", class: "tests" },
          h("thead", null, h("tr", null, ["#", "gen", "status", "verdict", "input", "answer", "scores / judge", "features"].map((c) => h("th", null, c)))),
          rows,
        ),
      ),
    );
  }

  // --- an experiment ----------------------------------------------------------------------
  function comparison() {
    return section(
      "comparison",
      "Comparison",
      muted("Per algorithm, means over its runs (seeds)."),
      h("div", { class: "scroll" }, table("algorithms", D.algorithms)),
      h("h3", null, "Every pair of algorithms"),
      muted("Two-sided Mann-Whitney U (significant below 0.05) and Vargha-Delaney A12 (> 0.5 favours the first)."),
      h("div", { class: "scroll" }, table("statistics", D.statistics)),
    );
  }

  function plots() {
    if (!D.plots.length) return null;
    return section(
      "plots",
      "Plots",
      h(
        "div",
        { class: "plots" },
        D.plots.map((p) =>
          h("figure", { class: p.wide ? "wide" : null }, h("img", { src: p.src, alt: p.title }), h("figcaption", null, p.title)),
        ),
      ),
    );
  }

  function runs() {
    return section("runs", "Runs", h("div", { class: "scroll" }, table("runs-table", D.runs, D.runs.header.length - 1)));
  }

  if (D.kind === "experiment") add(main, [summary(), comparison(), plots(), modes(), runs()]);
  else add(main, [summary(), review(), reading(), modes(), rules(), featureRates(), heatmap(), curves(), testsTable()]);
  document.body.setAttribute("data-ready", "1");
})();
