"use strict";
// STELLAR's review page. Every text from the run goes in as a text node (never as markup);
// a mark is shown as saved only once the server says it is on disk.
(() => {
  const D = JSON.parse(document.getElementById("data").textContent);
  const main = document.getElementById("main");
  const progress = document.getElementById("progress");
  const MARKS = ["real", "false_alarm", "unsure"];
  const WORDS = { real: "real", false_alarm: "false alarm", unsure: "unsure" };
  const KEYS = { r: "real", f: "false_alarm", u: "unsure" };
  const items = D.items;
  let at = Math.max(0, items.findIndex((item) => !item.mark));
  let saving = Promise.resolve();
  let saved = 0;

  function h(tag, values, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(values || {})) {
      if (value !== null && value !== undefined && value !== false) node.setAttribute(key, String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.appendChild(typeof kid === "object" ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  const verdict = (item) => h("span", { class: `badge v-${item.failed ? "fail" : "pass"}` }, item.failed ? "fail" : "pass");
  const markBadge = (item) => (item.mark ? h("span", { class: `badge m-${item.mark}` }, WORDS[item.mark]) : null);
  const field = (name, text, id) => h("div", { class: "field" }, h("span", { class: "key" }, name), h("div", { class: "text", id }, text));

  // --- the queue on the left, the verdict under review on the right ------------------------
  const list = h("ol", { id: "queue", class: "queue" });
  const card = h("section", { id: "item", class: "item" });
  const status = h("p", { id: "status", class: "muted", role: "status" });
  const note = h("textarea", { id: "note", rows: 3, maxlength: 2000, placeholder: "note (optional): n to write, Enter to save it with the mark" });
  const buttons = MARKS.map((mark) =>
    h("button", { type: "button", class: `mark m-${mark}`, "data-mark": mark }, WORDS[mark], " ", h("kbd", null, mark[0])),
  );
  buttons.forEach((button) => button.addEventListener("click", () => save(button.dataset.mark)));

  function drawProgress() {
    const marked = items.filter((item) => item.mark);
    const counts = MARKS.map((mark) => `${marked.filter((item) => item.mark === mark).length} ${WORDS[mark]}`);
    progress.replaceChildren(h("span", { id: "counts" }, `${marked.length} of ${items.length} marked: ${counts.join(", ")}`), h("span", null, `reviewer: ${D.reviewer}`));
  }

  function drawQueue() {
    list.replaceChildren(
      ...items.map((item, i) => {
        const li = h("li", { class: i === at ? "current" : null, "data-index": i }, h("span", { class: "pos" }, `${i + 1}.`), verdict(item), h("span", { class: "part" }, item.sample === "uncertain" ? "uncertain" : "random"), markBadge(item));
        li.addEventListener("click", () => go(i));
        return li;
      }),
    );
  }

  function drawItem() {
    const item = items[at];
    if (!item) {
      card.replaceChildren(h("h2", null, "Nothing to review"), h("p", { class: "muted" }, "The run has no verdicts (tests judged pass or fail)."));
      return;
    }
    note.value = item.note || "";
    buttons.forEach((button) => button.classList.toggle("chosen", button.dataset.mark === item.mark));
    const kids = [
      h("h2", null, `Verdict ${at + 1} of ${items.length}: test ${item.id} `, verdict(item), " ", markBadge(item)),
      h("p", { class: "muted", id: "part" }, `queue part: ${D.parts[item.sample] || item.sample}`),
      item.scores ? field("scores", item.scores, "scores") : null,
      item.reason ? field("judge", item.reason, "reason") : null,
      field("input", item.input, "input"),
      field(item.conversation ? "conversation" : "answer", item.answer, "answer"),
      h("div", { class: "controls" }, buttons),
      note,
      status,
    ];
    card.replaceChildren(...kids.filter(Boolean));
    const current = list.children[at];
    if (current) current.scrollIntoView({ block: "nearest" });
  }

  function go(i) {
    if (i < 0 || i >= items.length) return;
    at = i;
    drawQueue();
    drawItem();
  }

  // a mark is posted in order after the ones before it, and the page moves on at once; the
  // queue shows the mark once the server says it is on disk
  function save(mark) {
    const item = items[at];
    if (!item) return;
    const body = JSON.stringify({ test_id: item.id, mark, note: note.value });
    status.textContent = `saving: test ${item.id} ${WORDS[mark]}…`;
    status.classList.remove("error");
    go(Math.min(at + 1, items.length - 1));
    saving = saving
      .then(() => fetch(D.save, { method: "POST", headers: { "Content-Type": "application/json" }, body, cache: "no-store" }))
      .then(async (response) => {
        const answer = await response.json().catch(() => ({}));
        if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
        item.mark = answer.mark;
        item.note = answer.note;
        saved += 1;
        document.body.dataset.saved = String(saved);
        drawProgress();
        drawQueue();
        if (items[at] === item && document.activeElement !== note) drawItem();
        if (!status.classList.contains("error")) status.textContent = `saved: test ${item.id} ${WORDS[answer.mark]}`;
      })
      .catch((error) => {
        status.textContent = `NOT saved: test ${item.id}: ${error.message}`;
        status.classList.add("error");
      });
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target === note) {
      if (event.key === "Escape") note.blur();
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        note.blur();
        if (items[at] && items[at].mark) save(items[at].mark);
      }
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (KEYS[key]) save(KEYS[key]);
    else if (key === "n") note.focus();
    else if (key === "j" || key === "ArrowDown" || key === "ArrowRight") go(at + 1);
    else if (key === "k" || key === "ArrowUp" || key === "ArrowLeft") go(at - 1);
    else return;
    event.preventDefault();
  });

  const keys = [["r", "real: the verdict is right"], ["f", "false alarm: the verdict is wrong"], ["u", "unsure"], ["n", "write a note (Enter saves it, Esc leaves it)"], ["j / ↓", "next"], ["k / ↑", "previous"]];
  const reading = h(
    "details",
    { id: "reading" },
    h("summary", null, "How the judge decides"),
    D.reading.rules.map((rule) => h("p", { class: "rule" }, rule)),
    h("dl", null, D.reading.scores.map(([name, meaning]) => [h("dt", null, name), h("dd", null, meaning)])),
  );
  main.append(
    h("section", { id: "keys" }, h("p", { class: "muted" }, "Mark each verdict: is the judge right? The least certain verdicts come first, then a random sample of failures and passes, whose marks estimate the share of the run's failures that are real. Every mark is written to review.jsonl at once; mark again to change it.", " Keys: ", keys.map(([k, what]) => [h("kbd", null, k), ` ${what}  `])), reading),
    h("div", { class: "review" }, h("aside", null, list), card),
  );
  drawProgress();
  drawQueue();
  drawItem();
  document.body.dataset.ready = "1";
})();
