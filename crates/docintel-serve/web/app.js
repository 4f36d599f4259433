// docintel's web page: key, upload, ask, answer and citations; a citation
// shows its page (PNG drawn by the server) with the cited lines highlighted
// from their boxes (PDF points → pixels); the first citation is shown with
// the answer. No external request.
//
// Shareable links: `/?q=QUESTION[&doc=ID]` asks on load (with the key of the
// session); `#key=KEY` gives the key in the fragment, which the browser never
// sends: it is kept in the session and removed from the address bar. After
// an ask, the address bar holds the link of that question.
//
// Conversation: the questions asked in the session are sent as `history`
// with the next one (the last 20), so a follow-up ("When is it due?") is
// read after them; "New conversation" forgets them.
"use strict";

const $ = (id) => document.getElementById(id);
const MAX_HISTORY = 20;
let pageUrl = null;

function key() { return sessionStorage.getItem("docintel-key") || ""; }

function earlierTurns() {
  try { return JSON.parse(sessionStorage.getItem("docintel-history") || "[]"); } catch (e) { return []; }
}

function setTurns(turns) {
  sessionStorage.setItem("docintel-history", JSON.stringify(turns.slice(-MAX_HISTORY)));
  const turnsNow = earlierTurns();
  $("conversation").textContent = turnsNow.length
    ? "Follow-up of " + turnsNow.length + " earlier question(s): " + turnsNow.map((q) => "“" + q + "”").join(", ")
    : "";
  $("new-conversation").disabled = turnsNow.length === 0;
}

function status(text, error) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

async function api(path, options) {
  const init = Object.assign({}, options || {});
  init.headers = Object.assign({ Authorization: "Bearer " + key() }, init.headers || {});
  const response = await fetch(path, init);
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try { const body = await response.json(); message = body.error.code + ": " + body.error.message; } catch (e) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

async function loadDocuments() {
  const body = await (await api("/v1/documents")).json();
  const select = $("document");
  const chosen = select.value;
  select.replaceChildren(new Option("All documents (the index picks)", ""));
  for (const d of body.documents) select.add(new Option(d.name + " (" + d.pages + " p.)", d.id));
  select.value = chosen;
  return body.documents;
}

function valueText(item) {
  const v = item.value;
  if (v === null || v === undefined) return item.text || "";
  if (typeof v !== "object") return String(v);
  if ("value" in v && "currency" in v) return v.value + " " + (v.currency || "");
  if ("quantity" in v) return v.quantity + (v.unit ? " " + v.unit : "");
  if ("iso" in v) return v.iso;
  return item.text || JSON.stringify(v);
}

function showAnswer(body) {
  const a = body.answer;
  const answer = $("answer");
  answer.replaceChildren();
  const value = document.createElement("p");
  value.className = "value";
  value.id = "answer-value";
  value.textContent = a.answer_found ? a.items.map(valueText).join(" · ") : "Not found";
  const meta = document.createElement("p");
  meta.className = "meta";
  meta.textContent = a.answer_type + " · " + a.answer_shape + " · confidence " + Number(a.confidence).toFixed(2) +
    " · citations " + (body.citations_verified ? "verified" : "NOT verified") + " · " + body.kb.document_name;
  answer.append(value, meta);
  const followUp = body._meta && body._meta.follow_up;
  if (followUp && followUp.rewrite) {
    const read = document.createElement("p");
    read.className = "meta";
    read.id = "answer-rewrite";
    read.textContent = "Searched as: “" + followUp.rewrite + "”";
    answer.append(read);
  }
  for (const w of a.warnings || []) {
    const p = document.createElement("p");
    p.className = "meta";
    p.textContent = "⚠ " + w;
    answer.append(p);
  }
  const list = $("citations");
  list.replaceChildren();
  let i = 0;
  for (const item of a.items) {
    for (const span of item.spans) {
      const cite = body.kb.citations[i++] || { document_id: body.kb.document_id };
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "citation";
      button.setAttribute("aria-pressed", "false");
      button.dataset.document = cite.document_id;
      button.dataset.page = span.page;
      button.dataset.lineStart = span.line_start;
      button.dataset.lineEnd = span.line_end;
      button.textContent = "p." + span.page + " l." + span.line_start + (span.line_end !== span.line_start ? "-" + span.line_end : "") + ": “" + span.quote + "”";
      button.addEventListener("click", () => showCitation(button));
      li.append(button);
      list.append(li);
    }
  }
  $("result").hidden = false;
}

async function showCitation(button) {
  for (const b of document.querySelectorAll(".citation")) b.setAttribute("aria-pressed", "false");
  button.setAttribute("aria-pressed", "true");
  const { document: id, page } = button.dataset;
  const start = Number(button.dataset.lineStart), end = Number(button.dataset.lineEnd);
  status("Loading page " + page + "…");
  try {
    const base = "/v1/documents/" + encodeURIComponent(id) + "/pages/" + encodeURIComponent(page);
    const [png, lines] = await Promise.all([api(base).then((r) => r.blob()), api(base + "/lines").then((r) => r.json())]);
    const img = $("page");
    if (pageUrl) URL.revokeObjectURL(pageUrl);
    pageUrl = URL.createObjectURL(png);
    await new Promise((resolve, reject) => { img.onload = resolve; img.onerror = reject; img.src = pageUrl; });
    $("viewer").hidden = false;
    $("viewer-title").textContent = "Page " + page + " (lines " + start + "–" + end + ")";
    img.dataset.pageWidth = lines.width;
    img.dataset.pageHeight = lines.height;
    drawHighlights(lines, start, end);
    status("Page " + page + ": " + (end - start + 1) + " line(s) highlighted.");
    $("viewer").scrollIntoView({ block: "nearest" });
  } catch (e) {
    status(e.message, true);
  }
}

// PDF points (origin bottom left) → pixels of the shown image.
function drawHighlights(lines, start, end) {
  const img = $("page");
  const wrap = $("page-wrap");
  for (const old of wrap.querySelectorAll(".hl")) old.remove();
  const scale = img.clientWidth / lines.width;
  for (const line of lines.lines) {
    if (line.line_id < start || line.line_id > end) continue;
    const b = line.bbox;
    const box = document.createElement("div");
    box.className = "hl";
    box.dataset.lineId = line.line_id;
    box.style.left = (b.x0 * scale) + "px";
    box.style.top = ((lines.height - b.y1) * scale) + "px";
    box.style.width = ((b.x1 - b.x0) * scale) + "px";
    box.style.height = ((b.y1 - b.y0) * scale) + "px";
    wrap.append(box);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("key").value = key();
  $("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    sessionStorage.setItem("docintel-key", $("key").value.trim());
    try { const docs = await loadDocuments(); status(docs.length + " document(s)."); } catch (e) { status(e.message, true); }
  });
  $("upload-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = $("file").files[0];
    if (!file) { status("Choose a PDF first.", true); return; }
    status("Uploading " + file.name + "…");
    try {
      const body = await (await api("/v1/documents?name=" + encodeURIComponent(file.name), {
        method: "POST", headers: { "Content-Type": "application/pdf" }, body: file,
      })).json();
      await loadDocuments();
      $("document").value = body.document.id;
      status(file.name + ": " + body.status + " (" + body.document.pages + " page(s)).");
    } catch (e) { status(e.message, true); }
  });
  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    ask();
  });
  $("new-conversation").addEventListener("click", () => {
    setTurns([]);
    status("New conversation: the next question is asked alone.");
    $("question").focus();
  });
  setTurns(earlierTurns());
  start();
});

// The key of a `#key=` fragment, the question of `?q=` (and `?doc=`).
async function start() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("key")) {
    sessionStorage.setItem("docintel-key", fragment.get("key").trim());
    $("key").value = key();
    history.replaceState(null, "", location.pathname + location.search);
  }
  if (!key()) return;
  try { await loadDocuments(); } catch (e) { status(e.message, true); return; }
  const query = new URLSearchParams(location.search);
  const question = (query.get("q") || "").trim();
  if (!question) return;
  $("question").value = question;
  const doc = query.get("doc") || "";
  if (doc && ![...$("document").options].some((o) => o.value === doc)) {
    status("No document " + doc + " for this key.", true);
    return;
  }
  $("document").value = doc;
  await ask();
}

async function ask() {
  const request = { question: $("question").value };
  if ($("document").value) request.document = $("document").value;
  const earlier = earlierTurns();
  if (earlier.length) request.history = earlier;
  status("Asking…");
  try {
    const body = await (await api("/v1/ask", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request),
    })).json();
    const link = new URLSearchParams({ q: request.question });
    if (request.document) link.set("doc", request.document);
    history.replaceState(null, "", location.pathname + "?" + link.toString());
    showAnswer(body);
    setTurns(earlier.concat([request.question]));
    status("Answered.");
    const first = document.querySelector(".citation");
    if (first) await showCitation(first);
  } catch (e) { status(e.message, true); }
}
